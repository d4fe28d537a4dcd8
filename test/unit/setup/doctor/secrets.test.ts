import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/config/config.js';
import { emptySecrets, generateKey, writeSecrets } from '../../../../src/config/secrets.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import { checkOpsKey, checkSecrets, checkTemplateKey } from '../../../../src/setup/doctor/secrets.js';

const root = mkdtempSync(join(tmpdir(), 'doctor-secrets-'));
let n = 0;
const folder = () => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};

describe('doctor: the secrets check', () => {
  it('no file and no credentials: a failure saying how to write it', () => {
    const config = parseConfig({ dataDir: folder() });
    const { result, secrets } = checkSecrets(config, { credentialsDir: null });
    expect(secrets).toBeNull();
    expect(result).toMatchObject({ name: 'secrets', status: 'fail', hint: 'run "edge-agent provision" to write it' });
    expect(result.detail).toBe(`no secrets file at ${join(config.dataDir, 'secrets.yaml')} and no systemd credentials`);
  });

  it('a file readable by others fails with the chmod that fixes it', () => {
    const file = join(folder(), 'secrets.yaml');
    writeFileSync(file, 'apiKey: k\n');
    chmodSync(file, 0o644);
    const { result } = checkSecrets(parseConfig({}), { file, credentialsDir: null });
    expect(result.status).toBe('fail');
    expect(result.detail).toMatch(/^SECRETS_PERMISSIONS/);
    expect(result.hint).toBe(`run: chmod 600 ${file}`);
  });

  it('names what is missing: the API pair only when punches or a URL need it, the template key always', () => {
    const file = join(folder(), 'secrets.yaml');
    writeSecrets(file, { ...emptySecrets(), apiKey: 'k' });
    const withApi = checkSecrets(parseConfig({ upstream: ['api'] }), { file, credentialsDir: null });
    expect(withApi.result.status).toBe('fail');
    expect(withApi.result.detail).toBe(`${file} (mode 0600) is readable but lacks apiSecret, templateKey`);
    expect(withApi.secrets?.apiKey).toBe('k');
    const mqttOnly = checkSecrets(parseConfig({ upstream: ['mqtt'] }), { file, credentialsDir: null });
    expect(mqttOnly.result.detail).toMatch(/lacks templateKey$/);
  });

  it('a complete file passes, naming the secrets it has and never their values', () => {
    const file = join(folder(), 'secrets.yaml');
    const templateKey = generateKey();
    writeSecrets(file, { ...emptySecrets(), apiKey: 'k', apiSecret: 'the-secret', templateKey });
    const { result } = checkSecrets(parseConfig({ api: { url: 'http://127.0.0.1:9' } }), { file, credentialsDir: null });
    expect(result).toEqual({
      name: 'secrets',
      status: 'pass',
      detail: `${file} (mode 0600) is readable and private; has apiKey, apiSecret, templateKey`,
      hint: null,
    });
    expect(result.detail).not.toContain('the-secret');
  });
});

describe('doctor: the ops key and template key checks', () => {
  it('ops key: a warning pointing at the secrets check when they could not be read', () => {
    const r = checkOpsKey(parseConfig({ mqtt: { url: 'mqtt://127.0.0.1:1883' } }), null);
    expect(r).toMatchObject({ status: 'warn', hint: 'fix the secrets first (see the secrets check)' });
  });

  it('template key: a key with no database to try it on is a warning', async () => {
    const r = await checkTemplateKey(folder(), generateKey(), async () => ({ ok: true, checked: 0 }));
    expect(r).toMatchObject({ status: 'warn', detail: 'a 256-bit key is set; no database yet to try it on' });
  });

  it("template key: the verifier's answer decides, its failure detail shown", async () => {
    const dir = folder();
    await (await openAgentDatabase(dir)).close();
    const key = generateKey();
    expect(await checkTemplateKey(dir, key, async () => ({ ok: true, checked: 3 }))).toMatchObject({
      status: 'pass',
      detail: 'the key decrypts the stored templates (3 tried)',
    });
    expect(await checkTemplateKey(dir, key, async () => ({ ok: true, checked: 0 }))).toMatchObject({
      status: 'pass',
      detail: 'a valid 256-bit key; no templates stored yet to try it on',
    });
    const wrong = await checkTemplateKey(dir, key, async () => ({ ok: false, checked: 1, detail: 'key-check does not decrypt' }));
    expect(wrong).toMatchObject({ status: 'fail', detail: 'key-check does not decrypt' });
    expect(wrong.hint).toContain('restore the right templateKey');
  });
});
