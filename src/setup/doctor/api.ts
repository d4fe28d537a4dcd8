/** The upstream API check: the attendance service gives this terminal a token. */
import { AttendanceClient } from '../../api/client.js';
import type { AgentConfig } from '../../config/config.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

export interface ApiCheckInput {
  url: string | null;
  pathForm: AgentConfig['api']['pathForm'];
  clientId: string;
  timeoutMs: number;
  apiKey: string | null;
  apiSecret: string | null;
  /** Punches go to the API (`upstream` includes api): then a missing URL is a failure. */
  required?: boolean;
}

/** Fetches a token with the API key and secret. */
export async function checkApiToken(input: ApiCheckInput): Promise<CheckResult> {
  const name = 'api-token';
  if (!input.url && input.required)
    return fail(
      name,
      'upstream includes api but api.url is not set: the agent cannot start',
      'give --api URL to "edge-agent provision", or --upstream mqtt',
    );
  if (!input.url)
    return warn(
      name,
      'no API configured (api.url is null): punches go to the broker only (upstream mqtt)',
      'set --api URL with "edge-agent provision" if this terminal should deliver to the attendance API',
    );
  if (!input.apiKey || !input.apiSecret)
    return fail(
      name,
      `API ${input.url} configured but the ${input.apiKey ? 'secret' : 'key'} is missing`,
      'give --api-key and --api-secret-file to "edge-agent provision"',
    );
  const client = new AttendanceClient({
    baseUrl: input.url,
    clientId: input.clientId,
    apiKey: input.apiKey,
    apiSecret: input.apiSecret,
    pathForm: input.pathForm,
    timeoutMs: input.timeoutMs,
  });
  try {
    await client.getToken();
    return pass(name, `${input.url} gave a token for client ${input.clientId}`);
  } catch (err) {
    return fromError(name, err, `check that ${input.url} is reachable from this terminal`);
  }
}
