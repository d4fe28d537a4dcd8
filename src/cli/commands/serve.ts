import type { Command } from '../command.js';
import { intFlag, parseCommandArgs } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { createAttendanceService, DEFAULT_CLIENT_ID, DEFAULT_TOKEN_TTL_SEC } from '../../server/service.js';
import { displayDb } from '../../server/store/open.js';

const usage = `usage: edge-agent serve --port P --db FILE|URL [options]
  Runs the attendance service (all nine operations, OAuth2, roles, the work-hour report) on
  SQLite or PostgreSQL, and serves until SIGINT or SIGTERM. Prints the URL it listens on.
  Several serve processes on one PostgreSQL database are replicas (docs/central.md).

  --port P              TCP port; 0 picks a free one (default 8080)
  --host H              address to listen on (default 127.0.0.1)
  --db FILE|URL         the service's SQLite file (created if missing), or a PostgreSQL URL
                        postgres://user@host:5432/db (password from PGPASSWORD or ~/.pgpass;
                        biometric key from EDGE_AGENT_BIOMETRIC_KEY_FILE)
  --client-id ID        OAuth2 client id expected in the token request (default ${DEFAULT_CLIENT_ID})
  --shifts FILE         shifts for events and the report (JSON or YAML; default GENERAL 09:00-17:00, 60 min break)
  --token-ttl SEC       access token lifetime in seconds (default ${DEFAULT_TOKEN_TTL_SEC})
  --tz-offset-unit U    unit of tzOffset on the wire: minutes (default) or hours
  --max-body-bytes N    largest request body accepted (default 8388608)

  Create API keys with: edge-agent keys create --db FILE|URL --role admin|admin-audit`;

const command: Command = {
  summary: 'run the attendance service (HTTP, OAuth2, SQLite or PostgreSQL)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      {
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        'client-id': { type: 'string' },
        shifts: { type: 'string' },
        'token-ttl': { type: 'string' },
        'tz-offset-unit': { type: 'string' },
        'max-body-bytes': { type: 'string' },
      },
      usage,
      false,
    );
    if (!values.db) throw new AgentError('CLI_USAGE', 'serve needs --db FILE|URL (the service database)', {}, { hint: usage });
    const unit = values['tz-offset-unit'] ?? 'minutes';
    if (unit !== 'minutes' && unit !== 'hours') throw new AgentError('CLI_USAGE', `--tz-offset-unit is minutes or hours, got "${unit}"`, {}, { hint: usage });
    const port = intFlag('port', values.port, 8080)!;
    if (port < 0 || port > 65535) throw new AgentError('CLI_USAGE', `--port must be 0..65535, got ${port}`, {}, { hint: usage });
    const service = createAttendanceService({
      dbPath: values.db,
      clientId: values['client-id'] ?? DEFAULT_CLIENT_ID,
      tokenTtlSec: intFlag('token-ttl', values['token-ttl'], DEFAULT_TOKEN_TTL_SEC)!,
      ...(values.shifts ? { shifts: values.shifts } : {}),
      tzOffsetUnit: unit,
      ...(values['max-body-bytes'] ? { maxBodyBytes: intFlag('max-body-bytes', values['max-body-bytes'])! } : {}),
    });
    let url: string;
    try {
      url = await service.listen(port, values.host ?? '127.0.0.1');
    } catch (err) {
      await service.close().catch(() => undefined);
      throw err;
    }
    process.stdout.write(`attendance service listening on ${url} (database ${displayDb(values.db)}; Ctrl-C stops it)\n`);
    return new Promise<number>((resolve) => {
      const stop = (signal: string) => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        process.stdout.write(`${signal}: stopping the attendance service\n`);
        service.close().then(
          () => resolve(0),
          (err) => {
            process.stderr.write(`error while stopping: ${(err as Error).message}\n`);
            resolve(1);
          },
        );
      };
      const onInt = () => stop('SIGINT');
      const onTerm = () => stop('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
    });
  },
};
export default command;
