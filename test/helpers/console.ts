/**
 * What the operations console's tests share: a real broker, real agents (`edge-agent run` children
 * holding the site's ops key, metrics every second) and `edge-agent console` as a child with a
 * password and the ops key, on a free port; and a login through its real HTTP form.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { hashSecret } from '../../src/core/secret-hash.js';
import { startBroker, type TestBroker } from './broker.js';
import { killTree, spawnCli, waitForLine } from './cli.js';
import { startAgent, stopChild, terminalDir } from './agent.js';

export const CONSOLE_PASSWORD = 'correct horse battery staple';

export interface ConsoleFixture {
  broker: TestBroker;
  opsKey: Buffer;
  /** `http://127.0.0.1:PORT/` */
  url: string;
  console: ChildProcess;
  agents: Map<string, ChildProcess>;
  /** Each agent's data folder, by `site/terminal`. */
  dataDirs: Map<string, string>;
  stop(): Promise<void>;
}

/** A terminal of the fixture: its upstream (default `--upstream mqtt`, the broker) and more flags, and its environment. */
export interface FixtureTerminal {
  site: string;
  terminal: string;
  args?: string[];
  env?: Record<string, string>;
}

export async function startConsoleFixture(o: { terminals: FixtureTerminal[]; console?: Record<string, unknown> }): Promise<ConsoleFixture> {
  const broker = await startBroker();
  const opsKey = randomBytes(32);
  const agents = new Map<string, ChildProcess>();
  const dataDirs = new Map<string, string>();
  let consoleChild: ChildProcess | null = null;
  const stop = async () => {
    if (consoleChild) await stopChild(consoleChild);
    await Promise.all(
      [...agents.values()].map((a) => (a.exitCode === null && a.signalCode === null ? stopChild(a) : Promise.resolve(null))),
    );
    await broker.stop();
  };
  try {
    // Started one after the other: two agents compiling and opening at once on two shared cores is slow.
    for (const t of o.terminals) {
      const dir = terminalDir({ extra: { opsKey: opsKey.toString('hex') } });
      dataDirs.set(`${t.site}/${t.terminal}`, dir.dataDir);
      agents.set(
        `${t.site}/${t.terminal}`,
        await startAgent(
          ['--data', dir.dataDir, '--terminal', t.terminal, '--site', t.site, '--mqtt', broker.url, ...(t.args ?? ['--upstream', 'mqtt'])],
          { EDGE_AGENT_OPS__METRICS_INTERVAL_SEC: '1', ...t.env },
        ),
      );
    }
    const dir = mkdtempSync(join(tmpdir(), 'console-'));
    const secrets = join(dir, 'secrets.yaml');
    writeFileSync(secrets, `opsKey: ${opsKey.toString('hex')}\nconsolePassword: '${await hashSecret(CONSOLE_PASSWORD)}'\n`, {
      mode: 0o600,
    });
    const config = join(dir, 'console.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, console: o.console ?? {} }));
    consoleChild = spawnCli(['console', '--config', config, '--secrets', secrets, '--mqtt', broker.url, '--port', '0'], {
      env: { EDGE_AGENT_LOG_LEVEL: 'info' },
    });
    let url: string;
    try {
      [, url] = (await waitForLine(consoleChild, /^console listening on (\S+) /, 30_000, 'stdout')) as unknown as [string, string];
    } catch (err) {
      killTree(consoleChild);
      throw err;
    }
    return { broker, opsKey, url, console: consoleChild, agents, dataDirs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Logs in through the form as a browser would (same Origin); returns the Cookie header value. */
export async function loginCookie(url: string, password = CONSOLE_PASSWORD): Promise<string> {
  const res = await fetch(new URL('/login', url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: new URL(url).origin },
    body: new URLSearchParams({ password }).toString(),
  });
  if (res.status !== 303) throw new Error(`login answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers.get('set-cookie');
  if (!cookie) throw new Error('login set no cookie');
  return cookie.split(';')[0]!;
}

/**
 * What Home Assistant's State sensor shows for a retained state message, read as its discovery
 * document says: the template must be the one the console publishes (the `state` of a signed JSON
 * document, or the bare word an older agent publishes), which this applies.
 */
export function homeAssistantState(config: { value_template?: string }, payload: string | undefined): string | null {
  if (config.value_template !== "{{ (value_json.state if value.startswith('{') else value) }}") {
    throw new Error(`unexpected State template: ${config.value_template}`);
  }
  if (payload === undefined) return null;
  return payload.startsWith('{') ? ((JSON.parse(payload) as { state?: string }).state ?? null) : payload;
}
