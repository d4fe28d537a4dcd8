// Signed telemetry against forgeries on a real broker (Mosquitto where installed): two real
// `edge-agent run` daemons sign their state, info, metrics and last will with the site's ops key;
// one is killed (the broker publishes its signed will, `lost`). Then anyone on the broker publishes
// a retained `online` for the dead one, a retained `lost` for the live one and 10,000 unsigned fake
// terminals, and a new real terminal starts. The running console (its API and /metrics) and a
// `fleet` run afterwards show the real states and the new terminal; the fakes are unverified.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import type { ChildProcess } from 'node:child_process';
import { startAgent, stopChild, terminalDir, until } from '../helpers/agent.js';
import { runCli } from '../helpers/cli.js';
import { loginCookie, startConsoleFixture, type ConsoleFixture } from '../helpers/console.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SITE = 'plant-sig';
const FAKES = 10_000;
let fx: ConsoleFixture;
let newcomer: ChildProcess | null = null;

beforeAll(async () => {
  fx = await startConsoleFixture({
    terminals: [
      { site: SITE, terminal: 'gate-live' },
      { site: SITE, terminal: 'gate-dead' },
    ],
  });
}, 120_000);
afterAll(async () => {
  if (newcomer) await stopChild(newcomer);
  await fx?.stop();
});

interface Row {
  key: string;
  state: string | null;
  verified: boolean;
}

async function rows(cookie: string): Promise<Row[]> {
  const res = await fetch(new URL('/api/fleet', fx.url), { headers: { Cookie: cookie } });
  return ((await res.json()) as { terminals: Row[] }).terminals;
}

async function metricsText(): Promise<string> {
  return (await fetch(new URL('/metrics', fx.url))).text();
}

describe('signed telemetry', () => {
  it('keeps the real states and a new real terminal in every view despite forgeries and 10,000 fakes', async () => {
    const cookie = await loginCookie(fx.url);
    const byKey = async () => new Map((await rows(cookie)).map((r) => [r.key, r]));
    await until(async () => {
      const m = await byKey();
      return m.get(`${SITE}/gate-live`)?.state === 'online' && m.get(`${SITE}/gate-dead`)?.state === 'online';
    }, 30_000);
    expect((await byKey()).get(`${SITE}/gate-live`)?.verified).toBe(true);

    // The dead one: killed, the broker publishes its signed will.
    fx.agents.get(`${SITE}/gate-dead`)!.kill('SIGKILL');
    await until(async () => (await byKey()).get(`${SITE}/gate-dead`)?.state === 'lost', 30_000, 'the will');

    // The forgeries, retained, and 10,000 fakes in bulk (QoS 0; the last at QoS 1 marks the end).
    const attacker = await mqtt.connectAsync(fx.broker.url, { clientId: `gate-live-ops`, clean: true });
    attacker.publish(`attendance/${SITE}/gate-dead/state`, 'online', { qos: 0, retain: true });
    attacker.publish(`attendance/${SITE}/gate-live/state`, 'lost', { qos: 0, retain: true });
    attacker.publish(`attendance/${SITE}/gate-live/state`, JSON.stringify({ state: 'lost' }), { qos: 0, retain: true });
    for (let i = 0; i < FAKES; i++) attacker.publish(`attendance/${SITE}/fake-${i}/state`, 'online', { qos: 0, retain: true });
    await attacker.publishAsync(`attendance/${SITE}/fake-last/state`, 'online', { qos: 1, retain: true });

    // A new real terminal of the site starts after the flood.
    const dir = terminalDir({ extra: { opsKey: fx.opsKey.toString('hex') } });
    newcomer = await startAgent(
      ['--data', dir.dataDir, '--terminal', 'gate-new', '--site', SITE, '--mqtt', fx.broker.url, '--upstream', 'mqtt'],
      { EDGE_AGENT_OPS__METRICS_INTERVAL_SEC: '1' },
    );
    const seen = await until(
      async () => {
        const m = await byKey();
        return m.get(`${SITE}/gate-new`)?.state === 'online' ? m : null;
      },
      30_000,
      'the new terminal in the console',
    );
    // The console API: the real states, the newcomer, the fakes unverified and bounded.
    expect(seen.get(`${SITE}/gate-live`)).toMatchObject({ state: 'online', verified: true });
    expect(seen.get(`${SITE}/gate-dead`)).toMatchObject({ state: 'lost', verified: true });
    expect(seen.get(`${SITE}/gate-new`)).toMatchObject({ state: 'online', verified: true });
    const fakes = [...seen.values()].filter((r) => r.key.startsWith(`${SITE}/fake-`));
    expect(fakes.length).toBeGreaterThan(0);
    expect(fakes.length).toBeLessThanOrEqual(1000);
    expect(fakes.every((r) => !r.verified)).toBe(true);

    // /metrics says the same.
    const text = await metricsText();
    expect(text).toContain(`edge_agent_terminal_up{site="${SITE}",terminal="gate-live"} 1`);
    expect(text).toContain(`edge_agent_terminal_up{site="${SITE}",terminal="gate-dead"} 0`);
    expect(text).toContain(`edge_agent_terminal_up{site="${SITE}",terminal="gate-new"} 1`);
    expect(text).toContain(`edge_agent_terminal_verified{site="${SITE}",terminal="gate-new"} 1`);

    // The live terminal answered the forged `lost` with its true state: a fleet view started now
    // reads it online; the dead one's forged `online` is not believed; the fakes are unverified.
    const secrets = join(dir.dataDir, 'fleet-secrets.yaml');
    writeFileSync(secrets, `opsKey: ${fx.opsKey.toString('hex')}\n`, { mode: 0o600 });
    const fleet = await runCli(['fleet', '--mqtt', fx.broker.url, '--site', SITE, '--secrets', secrets, '--json'], { timeoutMs: 60_000 });
    const views = (JSON.parse(fleet.stdout) as { terminals: Array<{ terminal: string; state: string | null; verified: boolean }> })
      .terminals;
    const view = new Map(views.map((v) => [v.terminal, v]));
    expect(view.get('gate-live')).toMatchObject({ state: 'online', verified: true });
    expect(view.get('gate-new')).toMatchObject({ state: 'online', verified: true });
    expect(view.get('gate-dead')?.verified).toBe(true);
    expect(view.get('gate-dead')?.state).not.toBe('online');
    expect(view.get('fake-1')?.verified).toBe(false);
    const check = await runCli(['fleet', '--mqtt', fx.broker.url, '--site', SITE, '--secrets', secrets, '--check'], { timeoutMs: 60_000 });
    expect(check.stdout).toMatch(/CRITICAL: .*gate-dead/);
    expect(check.stdout).not.toMatch(/fake-\d+ (lost|degraded)/);
    expect(check.stdout).toMatch(/unverified terminal\(s\) not counted/);
    await attacker.endAsync();
  }, 180_000);
});
