/**
 * `edge-agent serve --db FILE|URL [--port P] [options]`: the attendance service on SQLite, or on
 * PostgreSQL for a `postgres://` URL (several serve processes on one database are replicas).
 *
 * Tested in test/integration/api-cli.test.ts, test/integration/service-abuse.test.ts and
 * test/integration/api-replicas.test.ts (edge-agent serve, the attendance service).
 */
import { Option, type Command } from 'commander';
import { action, defineCommand, intFlag, usageError } from '../command.js';
import { DEFAULT_LIMITS } from '../../server/context.js';

type Values = {
  port?: string;
  host?: string;
  db: string;
  'client-id'?: string;
  shifts?: string;
  'token-ttl'?: string;
  'tz-offset-unit'?: 'minutes' | 'hours';
  'max-body-bytes'?: string;
  'max-connections'?: string;
  'max-connections-per-address'?: string;
  'max-requests-per-address'?: string;
  'token-rate'?: string;
};

/**
 * Defaults the help states. The service's own constants live in src/server/service.ts, which loads
 * SQLite, so help does not import them; a test checks that they agree.
 */
export const SERVE_HELP_DEFAULTS = {
  clientId: 'edge-agent',
  tokenTtlSec: 3600,
  maxConnections: 512,
  maxConnectionsPerAddress: 64,
  maxRequestsPerAddress: 32,
  tokenRate: 30,
};

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'serve',
    summary: 'run the attendance service (HTTP, OAuth2, SQLite or PostgreSQL)',
    audience: 'site',
    details: `Runs the attendance service (all nine operations, OAuth2, roles, the work-hour report) on
SQLite or PostgreSQL, and serves until SIGINT or SIGTERM. Prints the URL it listens on.
Several serve processes on one PostgreSQL database are replicas of one service (docs/central.md):
the password comes from PGPASSWORD or ~/.pgpass, never the URL in a unit file, and every replica
needs the same biometric key (EDGE_AGENT_BIOMETRIC_KEY_FILE or the systemd credential biometric-key).
Create API keys with: edge-agent keys create --db FILE|URL --role admin|admin-audit`,
  })
    .requiredOption(
      '--db <file|url>',
      "the service's SQLite file (created if missing), or a PostgreSQL URL postgres://user@host:5432/db[?pool_max=N] (the database must exist)",
    )
    .option('--port <port>', 'TCP port; 0 picks a free one (default 8080)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--client-id <id>', `OAuth2 client id expected in the token request (default ${SERVE_HELP_DEFAULTS.clientId})`)
    .option('--shifts <file>', 'shifts for events and the report (JSON or YAML; default GENERAL 09:00-17:00, 60 min break)')
    .option('--token-ttl <sec>', `access token lifetime in seconds (default ${SERVE_HELP_DEFAULTS.tokenTtlSec})`)
    .addOption(
      new Option('--tz-offset-unit <unit>', 'unit of tzOffset on the wire: minutes (default) or hours').choices(['minutes', 'hours']),
    )
    .option('--max-body-bytes <n>', `largest request body accepted (default ${DEFAULT_LIMITS.maxBodyBytes})`)
    .option('--max-connections <n>', `connections at once; more are closed as they come (default ${SERVE_HELP_DEFAULTS.maxConnections})`)
    .option(
      '--max-connections-per-address <n>',
      `connections at once from one client address (IPv6: one /64); more are answered 503 after a second (default ${SERVE_HELP_DEFAULTS.maxConnectionsPerAddress}); raise it for many terminals behind one NAT address`,
    )
    .option(
      '--max-requests-per-address <n>',
      `requests handled at once for one client address; more are answered 503 at once (default ${SERVE_HELP_DEFAULTS.maxRequestsPerAddress})`,
    )
    .option(
      '--token-rate <n>',
      `token requests per client address: n at once, then n a minute (default ${SERVE_HELP_DEFAULTS.tokenRate}); behind a load balancer every client has its address, so raise it there`,
    );
  return action<Values>(cmd, async (values) => {
    const unit = values['tz-offset-unit'] ?? 'minutes';
    const port = intFlag('port', values.port, 8080)!;
    if (port < 0 || port > 65535) throw usageError('serve', `--port must be 0..65535, got ${port}`, { flag: 'port', value: port });
    const tokenTtlSec = intFlag('token-ttl', values['token-ttl']);
    const maxBodyBytes = intFlag('max-body-bytes', values['max-body-bytes']);
    /** A count flag: absent, or a whole number of at least 1. */
    const count = (flag: keyof Values & string): number | undefined => {
      const v = intFlag(flag, values[flag]);
      if (v !== undefined && v < 1) throw usageError('serve', `--${flag} must be at least 1, got ${v}`, { flag, value: v });
      return v;
    };
    const limits = {
      maxConnections: count('max-connections'),
      maxConnectionsPerAddress: count('max-connections-per-address'),
      maxRequestsPerAddress: count('max-requests-per-address'),
    };
    const http = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
    const tokenRate = count('token-rate');
    const { createAttendanceService, DEFAULT_CLIENT_ID, DEFAULT_TOKEN_TTL_SEC } = await import('../../server/service.js');
    const service = createAttendanceService({
      dbPath: values.db,
      clientId: values['client-id'] ?? DEFAULT_CLIENT_ID,
      tokenTtlSec: tokenTtlSec ?? DEFAULT_TOKEN_TTL_SEC,
      ...(values.shifts ? { shifts: values.shifts } : {}),
      tzOffsetUnit: unit,
      ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
      http,
      ...(tokenRate !== undefined ? { tokenGuard: { perAddress: { burst: tokenRate, perMinute: tokenRate } } } : {}),
    });
    let url: string;
    try {
      url = await service.listen(port, values.host ?? '127.0.0.1');
    } catch (err) {
      await service.close().catch(() => undefined);
      throw err;
    }
    const { displayDb } = await import('../../server/store/open.js');
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
  });
}
