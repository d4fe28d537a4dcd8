import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkApiToken, type ApiCheckInput } from '../../../../src/setup/doctor/api.js';
import { startService, type InProcessService } from '../../../helpers/service.js';

let service: InProcessService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

const input = (over: Partial<ApiCheckInput> = {}): ApiCheckInput => ({
  url: service.url,
  pathForm: 'api',
  clientId: service.clientId,
  timeoutMs: 5000,
  apiKey: service.apiKey,
  apiSecret: service.apiSecret,
  ...over,
});

describe('doctor: the API check against the real service on loopback', () => {
  it('passes when the service gives a token for the key and secret', async () => {
    expect(await checkApiToken(input())).toEqual({
      name: 'api-token',
      status: 'pass',
      detail: `${service.url} gave a token for client ${service.clientId}`,
      hint: null,
    });
  });

  it("fails with the client's error code when the service refuses the secret", async () => {
    const r = await checkApiToken(input({ apiSecret: 'not-the-secret' }));
    expect(r.status).toBe('fail');
    expect(r.detail).toMatch(/^API_AUTH_FAILED: /);
    expect(r.hint).toBeTruthy();
  });

  it('names which half of the pair is missing, without asking the service', async () => {
    expect((await checkApiToken(input({ apiSecret: null }))).detail).toBe(`API ${service.url} configured but the secret is missing`);
    expect((await checkApiToken(input({ apiKey: null }))).detail).toBe(`API ${service.url} configured but the key is missing`);
  });

  it('no URL: a warning when punches go elsewhere, a failure when they should go here', async () => {
    expect(await checkApiToken(input({ url: null }))).toMatchObject({ status: 'warn', detail: expect.stringContaining('upstream mqtt') });
    expect(await checkApiToken(input({ url: null, required: true }))).toMatchObject({
      status: 'fail',
      detail: 'upstream includes api but api.url is not set: the agent cannot start',
    });
  });
});
