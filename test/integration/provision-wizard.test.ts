import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CLI_ENTRY, CLI_NODE_ARGS, childEnv, ROOT } from '../helpers/cli.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { startBroker } from '../helpers/broker.js';
import { loadSecrets } from '../../src/config/secrets.js';

/**
 * The interactive wizard on a real terminal: a pseudo-terminal from node-pty gives the CLI a tty
 * (stdin and stdout), the test reads the prompts and types the answers, a wrong API secret first.
 */
const running = new Set<IPty>();
afterEach(() => {
  for (const p of running) p.kill('SIGKILL');
  running.clear();
});

function wizard(args: string[]) {
  const pty = spawn(process.execPath, [...CLI_NODE_ARGS, CLI_ENTRY, 'provision', ...args], {
    name: 'xterm',
    cols: 200,
    rows: 50,
    cwd: ROOT,
    env: childEnv({ EDGE_AGENT_LOG_LEVEL: 'warn' }) as Record<string, string>,
  });
  running.add(pty);
  let screen = '';
  let seen = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matches the terminal's ANSI escape sequences (ESC [ ...) to strip them from the screen text
  const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  pty.onData((d) => {
    screen += strip(d);
    if (process.env.EDGE_AGENT_TEST_LOGS === '1') process.stderr.write(d);
  });
  const exited = new Promise<number>((r) =>
    pty.onExit(({ exitCode }) => {
      running.delete(pty);
      r(exitCode);
    }),
  );
  return {
    exited,
    screen: () => screen,
    /** Waits for `prompt` (after what was matched before), then types `keys`. */
    async answer(prompt: string | RegExp, keys: string) {
      for (let i = 0; i < 900; i++) {
        const rest = screen.slice(seen);
        const m = typeof prompt === 'string' ? rest.indexOf(prompt) : rest.search(prompt);
        if (m >= 0) {
          seen += m + 1;
          await new Promise((r) => setTimeout(r, 60));
          pty.write(keys);
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no prompt ${String(prompt)}; screen:\n${screen}`);
    },
  };
}

/** The questions every run answers the same way, from the config file to the OAuth2 client id. */
async function answerTerminalAndApi(w: ReturnType<typeof wizard>, dir: string, url: string, id = '\r', site = '\r'): Promise<void> {
  await w.answer('Config file', '\r');
  await w.answer('Secrets file', '\r');
  await w.answer('Terminal id', id);
  await w.answer('Site', site);
  await w.answer('Time zone', '\r');
  await w.answer('Terminal mode', '\r');
  await w.answer('Data folder', `${join(dir, 'data')}\r`);
  await w.answer('Attendance API URL', `${url}\r`);
  await w.answer('API path form', '\r');
  await w.answer('OAuth2 client id', '\r');
}

describe('edge-agent provision, interactive', () => {
  let service: InProcessService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('asks step by step, checks the API key (again after a wrong secret), and writes config and 0600 secrets', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wizard-'));
    const config = join(dir, 'config.yaml');
    const w = wizard(['--config', config]);
    await answerTerminalAndApi(w, dir, service.url, 'gate-9\r', 'plant-3\r');
    await w.answer('API key', `${service.apiKey}\r`);
    await w.answer('API secret', 'wrong-secret\r');
    await w.answer('What now?', '\r'); // "Type it again"
    await w.answer('API key', '\r');
    await w.answer('API secret', `${service.apiSecret}\r`);
    await w.answer('MQTT broker URL', '\r');
    await w.answer('Search for attached scanners', 'n\r');
    await w.answer('Add a scanner by hand', '\r');
    await w.answer('Write these files?', '\r');
    expect(await w.exited, w.screen()).toBe(0);
    const screen = w.screen();
    expect(screen).toContain('API_AUTH_FAILED');
    expect(screen).toMatch(/ok: .* gave a token/);
    expect(screen).not.toContain(service.apiSecret);
    expect(screen).toContain('Written (configVersion 1)');

    const written = YAML.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    expect(written.terminal).toMatchObject({ id: 'gate-9', site: 'plant-3', mode: 'toggle' });
    expect(written.api).toHaveProperty('url', service.url);
    const secretsFile = join(dir, 'secrets.yaml');
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    const secrets = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(secrets.apiSecret).toBe(service.apiSecret);
    expect(secrets.templateKey).toHaveLength(32);
  }, 120_000);

  it('with a broker, asks for the ops key and generates one into the 0600 secrets without showing it', async () => {
    const broker = await startBroker();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'wizard-'));
      const config = join(dir, 'config.yaml');
      const w = wizard(['--config', config]);
      await w.answer('Config file', '\r');
      await w.answer('Secrets file', '\r');
      await w.answer('Terminal id', 'gate-4\r');
      await w.answer('Site', '\r');
      await w.answer('Time zone', '\r');
      await w.answer('Terminal mode', '\r');
      await w.answer('Data folder', `${join(dir, 'data')}\r`);
      await w.answer('Attendance API URL', '\r');
      await w.answer('MQTT broker URL', `${broker.url}\r`);
      await w.answer('MQTT username', '\r');
      await w.answer('MQTT password', '\r');
      await w.answer('Site key for template sync', '\r');
      await w.answer('Ops key', '\x1b[B\r'); // "generate a new one"
      await w.answer('Search for attached scanners', 'n\r');
      await w.answer('Add a scanner by hand', '\r');
      await w.answer('Write these files?', '\r');
      expect(await w.exited, w.screen()).toBe(0);
      const secrets = loadSecrets({ file: join(dir, 'secrets.yaml'), credentialsDir: null });
      expect(secrets.opsKey).toHaveLength(32);
      expect(w.screen()).toMatch(/ops key\s+set \(256-bit key\)/);
      expect(w.screen()).toContain('a new ops key was generated');
      expect(w.screen()).not.toContain(secrets.opsKey!.toString('hex'));
    } finally {
      await broker.stop();
    }
  }, 120_000);

  it('asks for the site key, offers to change a scanner that does not answer, and writes only a setup that passed its checks', async () => {
    const broker = await startBroker();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'wizard-'));
      const config = join(dir, 'config.yaml');
      const siteKey = 'c3'.repeat(32);
      const w = wizard(['--config', config]);
      await answerTerminalAndApi(w, dir, service.url, 'gate-5\r');
      await w.answer('API key', `${service.apiKey}\r`);
      await w.answer('API secret', `${service.apiSecret}\r`);
      await w.answer('MQTT broker URL', `${broker.url}\r`);
      await w.answer('MQTT username', '\r');
      await w.answer('MQTT password', '\r');
      await w.answer('Site key for template sync', 'not-a-key\r'); // refused in place
      await w.answer('is not a 32-byte key', `\x15${siteKey}\r`); // Ctrl-U clears the line
      await w.answer('Ops key', '\x1b[B\x1b[B\r'); // "none for now"
      await w.answer('Search for attached scanners', 'n\r');
      await w.answer('Add a scanner by hand', 'r30x:/dev/ttyEA-not-there\r');
      await w.answer('Add a scanner by hand', '\r');
      await w.answer('A scanner did not answer. What now?', '\x1b[B\r'); // "Change the scanners"
      await w.answer('Scanners this terminal uses', ' \r'); // untick the one that did not answer
      await w.answer('Add a scanner by hand', 'r30x:sim\r');
      await w.answer('Add a scanner by hand', '\r');
      await w.answer('Write these files?', '\r');
      expect(await w.exited, w.screen()).toBe(0);
      const screen = w.screen();
      expect(screen).toMatch(/fail: .*ttyEA-not-there/);
      expect(screen).not.toContain(siteKey);
      const written = YAML.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
      expect(written.scanners).toEqual([{ family: 'r30x', path: 'sim' }]);
      expect(written.upstream).toBeUndefined(); // the broker is monitoring: punches still go to the API
      expect(loadSecrets({ file: join(dir, 'secrets.yaml'), credentialsDir: null }).siteKey?.toString('hex')).toBe(siteKey);
    } finally {
      await broker.stop();
    }
  }, 180_000);

  it('stops without writing when a check fails and the technician chooses to stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wizard-'));
    const config = join(dir, 'config.yaml');
    const w = wizard(['--config', config]);
    await answerTerminalAndApi(w, dir, service.url);
    await w.answer('API key', `${service.apiKey}\r`);
    await w.answer('API secret', 'wrong\r');
    await w.answer('What now?', '\x1b[B\r'); // "Stop without writing anything"
    expect(await w.exited).toBe(1);
    expect(w.screen()).toContain('Stopped: nothing written.');
    expect(existsSync(config)).toBe(false);
  }, 120_000);

  it('Ctrl-C stops it without writing anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wizard-'));
    const config = join(dir, 'config.yaml');
    const w = wizard(['--config', config]);
    await w.answer('Config file', '\r');
    await w.answer('Secrets file', '\r');
    await w.answer('Terminal id', '\x03');
    expect(await w.exited).toBe(130);
    expect(w.screen()).toContain('stopped: nothing written');
    expect(existsSync(config)).toBe(false);
  }, 90_000);
});
