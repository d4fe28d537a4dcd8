/**
 * A real PostgreSQL server for tests and benchmarks, from Debian's `postgresql` package:
 * `initdb` into a temporary folder, `pg_ctl start` on a free loopback port with the socket in
 * that folder, one database per service (`createDatabase`), `stop()` stops it and removes the
 * folder. PostgreSQL refuses to run as root: as root, its programs run as `nobody`.
 *
 *   describe.skipIf(!hasPostgres())(`... (${needs(...POSTGRES_PROGRAMS)})`, ...)
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort } from './broker.js';
import { has, which } from './system.js';

export const POSTGRES_PROGRAMS = ['initdb', 'pg_ctl'];

export function hasPostgres(): boolean {
  return has(...POSTGRES_PROGRAMS);
}

export interface TestPostgres {
  port: number;
  /** The postmaster's process id (its backends are its children). */
  readonly pid: number | undefined;
  /** The URL of database `name` (user postgres, trust authentication on loopback). */
  url(name: string): string;
  /** Creates a new, empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** One statement on database `name` (`$1` placeholders). */
  query<T extends pg.QueryResultRow = Record<string, unknown>>(name: string, sql: string, params?: unknown[]): Promise<T[]>;
  /** Stops the server and keeps its data (a database outage); `resume` starts it again on the same port. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** `-c name=value` settings; default: no fsync (tests do not measure durability). */
  settings?: Record<string, string | number>;
  /** Keep fsync and synchronous commit on (benchmarks). */
  durable?: boolean;
}

/** uid and gid of `nobody`, when this process is root (PostgreSQL will not run as root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('running as root and there is no user "nobody" to run PostgreSQL as');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Lets `nobody` reach `dir`: a test file's temporary folder (test/helpers/sandbox.ts) is made
 * 0700 by mkdtemp, so each folder above `dir` that this process owns and others cannot pass
 * through gets the x bit for others (pass through, not list). Nothing else changes.
 */
function letThrough(dir: string): void {
  const uid = process.getuid?.();
  for (let d = dirname(dir); ; d = dirname(d)) {
    const st = statSync(d);
    if (st.uid === uid && (st.mode & 0o001) === 0) chmodSync(d, (st.mode & 0o7777) | 0o001);
    if (dirname(d) === d) break;
  }
}

function run(program: string, args: string[], cwd: string, timeoutMs = 60_000): Promise<void> {
  const path = which(program);
  if (!path) throw new Error(`${program} is not installed (apt-get install postgresql)`);
  const user = runAs();
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${program} ${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-pg-'));
  const user = runAs();
  if (user) {
    letThrough(dir);
    chownSync(dir, user.uid, user.gid);
  }
  const data = join(dir, 'data');
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    max_connections: 200,
    ...(options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  let port = 0;
  let started = false;
  const startServer = async () => {
    const opts = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
    await run('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '60', '-o', opts, 'start'], dir, 90_000);
    started = true;
  };
  const stopSync = () => {
    if (started) spawnSync(which('pg_ctl')!, ['-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore', ...(user ?? {}) });
    rmSync(dir, { recursive: true, force: true });
  };
  // A worker that dies without its afterAll still stops the server.
  process.once('exit', stopSync);
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8', '--no-sync'], dir);
    // A free port can be taken between the probe and the start: try a few.
    for (let tries = 0; ; tries++) {
      port = await freePort();
      try {
        await startServer();
        break;
      } catch (err) {
        if (tries >= 2) throw err;
      }
    }
  } catch (err) {
    let log = '';
    try {
      log = readFileSync(join(dir, 'postgres.log'), 'utf8').slice(-2000);
    } catch {
      /* no log yet */
    }
    process.off('exit', stopSync);
    stopSync();
    throw new Error(`${(err as Error).message}${log ? `\npostgres.log:\n${log}` : ''}`);
  }

  const url = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  let databases = 0;
  const query = async <T extends pg.QueryResultRow>(name: string, sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url(name) });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    port,
    get pid() {
      try {
        return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return undefined;
      }
    },
    url,
    query,
    async createDatabase(prefix = 'service') {
      const name = `${prefix}_${process.pid}_${++databases}`;
      await query('postgres', `CREATE DATABASE ${name}`);
      return url(name);
    },
    async halt() {
      await run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], dir);
      started = false;
    },
    resume: startServer,
    async stop() {
      process.off('exit', stopSync);
      if (started) await run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], dir).catch(() => undefined);
      started = false;
      stopSync();
    },
  };
}
