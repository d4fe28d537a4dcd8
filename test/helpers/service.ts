/**
 * Starts the real attendance service for tests: in-process (`startService`) or as a child process
 * through the real CLI (`startServiceProcess`: `edge-agent keys create` + `edge-agent serve`), on
 * 127.0.0.1 with a free port and a temporary SQLite file, with one `admin` and one `admin-audit`
 * key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { AttendanceClient } from '../../src/api/client.js';
import { setLogLevel, type LogLevel } from '../../src/core/logger.js';
import {
  createAttendanceService,
  DEFAULT_CLIENT_ID,
  type AttendanceService,
  type AttendanceServiceOptions,
} from '../../src/server/service.js';
import type { ShiftsConfig } from '../../src/server/shifts.js';
import { killTree, runCli, spawnCli, waitForLine } from './cli.js';

export interface StartServiceOptions {
  /** SQLite file or PostgreSQL URL to use (kept on stop); default a new temporary SQLite file (removed on stop). */
  dbPath?: string;
  /** The biometric key (PostgreSQL needs one: see test/helpers/databases.ts). */
  biometricKey?: Buffer;
  tokenRecheckMs?: number;
  tokenTtlSec?: number;
  shifts?: ShiftsConfig | string;
  clientId?: string;
  tzOffsetUnit?: 'minutes' | 'hours';
  limits?: AttendanceServiceOptions['limits'];
  /** Fixed port (default a free one). */
  port?: number;
}

export interface TestService {
  url: string;
  port: number;
  clientId: string;
  apiKey: string;
  apiSecret: string;
  auditKey: string;
  auditSecret: string;
  dbPath: string;
  stop(): Promise<void>;
}

export interface InProcessService extends TestService {
  service: AttendanceService;
}

export interface ChildService extends TestService {
  child: ChildProcess;
}

function tempDb(dbPath: string | undefined): { dbPath: string; cleanup: () => void } {
  if (dbPath) return { dbPath, cleanup: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-service-'));
  return { dbPath: join(dir, 'service.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The real service in this process. Request logs go to stderr at EDGE_AGENT_LOG_LEVEL (default error). */
export async function startService(options: StartServiceOptions = {}): Promise<InProcessService> {
  setLogLevel('server:*', (process.env.EDGE_AGENT_LOG_LEVEL as LogLevel | undefined) ?? 'error');
  const { dbPath, cleanup } = tempDb(options.dbPath);
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const service = createAttendanceService({
    dbPath,
    clientId,
    ...(options.tokenTtlSec ? { tokenTtlSec: options.tokenTtlSec } : {}),
    ...(options.shifts ? { shifts: options.shifts } : {}),
    ...(options.tzOffsetUnit ? { tzOffsetUnit: options.tzOffsetUnit } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.biometricKey ? { biometricKey: options.biometricKey } : {}),
    ...(options.tokenRecheckMs !== undefined ? { tokenRecheckMs: options.tokenRecheckMs } : {}),
  });
  try {
    const admin = await service.createApiKey('admin');
    const audit = await service.createApiKey('admin-audit');
    const url = await service.listen(options.port ?? 0, '127.0.0.1');
    return {
      url,
      port: Number(new URL(url).port),
      clientId,
      apiKey: admin.apiKey,
      apiSecret: admin.apiSecret,
      auditKey: audit.apiKey,
      auditSecret: audit.apiSecret,
      dbPath,
      service,
      async stop() {
        await service.close();
        cleanup();
      },
    };
  } catch (err) {
    await service.close().catch(() => undefined);
    cleanup();
    throw err;
  }
}

/**
 * The real service as a child process through the CLI (`edge-agent serve`). `stop()` sends
 * SIGTERM and waits for the exit (SIGKILL after 10 s).
 */
export async function startServiceProcess(options: StartServiceOptions & { extraArgs?: string[] } = {}): Promise<ChildService> {
  const { dbPath, cleanup } = tempDb(options.dbPath);
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const key = async (role: string, create = false) => {
    const r = await runCli(['keys', 'create', '--db', dbPath, '--role', role, '--json', ...(create ? ['--create'] : [])]);
    if (r.code !== 0) throw new Error(`keys create failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as { apiKey: string; apiSecret: string };
  };
  const admin = await key('admin', true);
  const audit = await key('admin-audit');
  const args = ['serve', '--port', String(options.port ?? 0), '--db', dbPath, '--client-id', clientId];
  if (options.tokenTtlSec) args.push('--token-ttl', String(options.tokenTtlSec));
  if (typeof options.shifts === 'string') args.push('--shifts', options.shifts);
  if (options.tzOffsetUnit) args.push('--tz-offset-unit', options.tzOffsetUnit);
  args.push(...(options.extraArgs ?? []));
  const child = spawnCli(args);
  let m: RegExpMatchArray;
  try {
    m = await waitForLine(child, /(http:\/\/127\.0\.0\.1:(\d+))/, 30_000, 'stdout');
  } catch (err) {
    killTree(child);
    cleanup();
    throw err;
  }
  return {
    url: m[1]!,
    port: Number(m[2]),
    clientId,
    apiKey: admin.apiKey,
    apiSecret: admin.apiSecret,
    auditKey: audit.apiKey,
    auditSecret: audit.apiSecret,
    dbPath,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => killTree(child), 10_000);
          child.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          child.kill('SIGTERM');
        });
      }
      cleanup();
    },
  };
}

/** A client of `service` under its API key, for a test's own setup (adding employees, reading back). */
export function adminClient(service: TestService): AttendanceClient {
  return new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
}

/**
 * The agent's flags to deliver to `service`: `--api`, `--client-id`, `--api-key` and
 * `--api-secret-file`, the secret written (0600) into `dir`, as a technician passes it.
 */
export function agentApiFlags(service: TestService, dir: string): string[] {
  const secretFile = join(dir, 'api-secret');
  writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
  return ['--api', service.url, '--client-id', service.clientId, '--api-key', service.apiKey, '--api-secret-file', secretFile];
}
