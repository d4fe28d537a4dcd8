/**
 * One state model, every view agreeing (src/ops/terminal-state.ts): a real agent (`edge-agent run`
 * with a simulated R30x on a real pseudo-terminal, a time service it asks, an upstream it cannot
 * reach) on a real broker, watched by `edge-agent console` with Home Assistant discovery. The test
 * drives the agent through each cause of `degraded` (clock not trusted, scanner unplugged, an
 * upstream failing with the outbox full) and back, and reads every view each time: `fleet --check`,
 * the console's HTTP API, its `/metrics`, the Home Assistant State sensor's topic and the alerts
 * the console publishes retained; "for" stays put while the agent republishes.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startSimulatedModule, until, type SimulatedModule } from '../helpers/agent.js';
import { homeAssistantState, loginCookie, startConsoleFixture, type ConsoleFixture } from '../helpers/console.js';
import { has, needs } from '../helpers/system.js';

const KEY = 'plant-s/gate-s';

interface ApiRow {
  key: string;
  state: string | null;
  reasons: string[];
  since: number | null;
  sinceExact: boolean;
  clockState: string | null;
}

/** Every view of the one terminal, read now. */
interface Views {
  check: { code: number | null; stdout: string };
  console: ApiRow;
  alerts: Array<{ code: string; terminal: string; message: string }>;
  metrics: string;
  homeAssistant: string | null;
  published: { alerts: Array<{ code: string; terminal: string; message: string }> } | null;
}

describe.skipIf(!has('socat'))(`one terminal state in every view (${needs('socat')})`, () => {
  let fx: ConsoleFixture;
  let sim: SimulatedModule;
  let cookie: string;
  let ntp: string;
  let retained: mqtt.MqttClient;
  const topics = new Map<string, string>();

  beforeAll(async () => {
    sim = await startSimulatedModule();
    // The time service the agent asks first (clock.sources: timedatectl): a stub that says what a file says.
    const bin = mkdtempSync(join(tmpdir(), 'state-bin-'));
    ntp = join(bin, 'ntp-synchronized');
    writeFileSync(ntp, 'no\n');
    writeFileSync(join(bin, 'timedatectl'), `#!/bin/sh\ncat '${ntp}'\n`);
    chmodSync(join(bin, 'timedatectl'), 0o755);
    writeFileSync(join(bin, 'api-secret'), 'not-used\n', { mode: 0o600 });
    fx = await startConsoleFixture({
      terminals: [
        {
          site: 'plant-s',
          terminal: 'gate-s',
          // An upstream nobody answers, and an outbox that is full with one punch.
          args: [
            '--scanner',
            `r30x:${sim.device}:57600`,
            '--upstream',
            'api',
            '--api',
            'http://127.0.0.1:9',
            '--client-id',
            'c',
            '--api-key',
            'k',
            '--api-secret-file',
            join(bin, 'api-secret'),
          ],
          env: { PATH: `${bin}:${process.env.PATH}`, EDGE_AGENT_OUTBOX__MAX_PENDING: '1' },
        },
      ],
      console: { alerts: { lostMinutes: 0 }, homeAssistant: { sites: ['*'] } },
    });
    cookie = await loginCookie(fx.url);
    retained = await mqtt.connectAsync(fx.broker.url);
    retained.on('message', (topic, payload) => topics.set(topic, payload.toString('utf8')));
    await retained.subscribeAsync(['homeassistant/sensor/#', 'attendance/plant-s/alerts', 'attendance/plant-s/gate-s/state']);
  }, 120_000);
  afterAll(async () => {
    await retained?.endAsync();
    await fx?.stop();
    await sim?.stop();
  });

  async function views(): Promise<Views> {
    const api = (await (await fetch(new URL('/api/fleet', fx.url), { headers: { Cookie: cookie } })).json()) as {
      terminals: ApiRow[];
      alerts: Views['alerts'];
    };
    const check = await runCli(['fleet', '--check', '--mqtt', fx.broker.url, '--site', 'plant-s']);
    // The State sensor of Home Assistant reads the topic its discovery document names.
    const config = topics.get('homeassistant/sensor/edge_agent_plant-s_gate-s_state/config');
    const discovery = config ? (JSON.parse(config) as { state_topic: string; value_template?: string }) : null;
    const published = topics.get('attendance/plant-s/alerts');
    return {
      check: { code: check.code, stdout: check.stdout },
      console: api.terminals.find((t) => t.key === KEY)!,
      alerts: api.alerts,
      metrics: await (await fetch(new URL('/metrics', fx.url))).text(),
      homeAssistant: discovery ? homeAssistantState(discovery, topics.get(discovery.state_topic)) : null,
      published: published ? (JSON.parse(published) as Views['published']) : null,
    };
  }

  /** A reason's pattern, found anywhere in an alert's message (which names the reasons after its own words). */
  const inMessage = (reason: RegExp) => new RegExp(reason.source.replace(/^\^/, '').replace(/\$$/, ''));

  /** Waits until the console shows `state` with a reason matching `reason`, then reads every view. */
  async function settled(state: string, reason: RegExp | null): Promise<Views> {
    return until(
      async () => {
        const v = await views();
        const row = v.console;
        const ok =
          row?.state === state &&
          (reason === null ? row.reasons.length === 0 : row.reasons.some((r) => reason.test(r))) &&
          v.homeAssistant === state &&
          v.metrics.includes(`edge_agent_terminal_state{site="plant-s",terminal="gate-s",state="${state}"} 1`) &&
          // The site's alerts document is published as the console judges (on a change, and every 2 s).
          (reason === null
            ? !v.published?.alerts.some((a) => a.code === 'TERMINAL_DEGRADED')
            : v.published?.alerts.some((a) => a.code === 'TERMINAL_DEGRADED' && inMessage(reason).test(a.message)) === true) &&
          (state === 'online' ? v.check.code === 0 : v.check.code === 1);
        return ok ? v : null;
      },
      30_000,
      `every view saying ${state}${reason ? ` (${reason})` : ''}`,
    );
  }

  function expectDegraded(v: Views, code: string, reason: RegExp): void {
    expect(v.console.reasons.some((r) => reason.test(r))).toBe(true);
    expect(v.check.stdout).toMatch(
      new RegExp(`^CRITICAL: 1 of 1 terminal\\(s\\) lost or degraded: plant-s/gate-s degraded: .*${reason.source}`, 'm'),
    );
    expect(v.metrics).toContain(`edge_agent_terminal_degraded_reason{site="plant-s",terminal="gate-s",reason="${code}"} 1`);
    expect(v.homeAssistant).toBe('degraded');
    const alert = v.alerts.find((a) => a.code === 'TERMINAL_DEGRADED');
    expect(alert?.message).toMatch(reason);
    expect(v.published?.alerts.find((a) => a.code === 'TERMINAL_DEGRADED')?.message).toMatch(reason);
  }

  it('a clock not trusted is degraded everywhere and reads unsynchronized; trusted again, it is online everywhere', async () => {
    const v = await settled('degraded', /clock not trusted \(timedatectl\)/);
    expectDegraded(v, 'CLOCK_UNTRUSTED', /clock not trusted \(timedatectl\)/);
    expect(v.console.clockState).toBe('unsynchronized');
    expect(v.metrics).toContain('edge_agent_clock_state{site="plant-s",terminal="gate-s",clock="unsynchronized"} 1');
    writeFileSync(ntp, 'yes\n');
    const back = await settled('online', null);
    expect(back.console.clockState).toBe('synchronized');
    expect(back.check.stdout).toMatch(/^OK: 1 terminal\(s\), none lost or degraded/m);
    expect(back.alerts.filter((a) => a.code === 'TERMINAL_DEGRADED')).toEqual([]);
    expect(back.metrics).not.toContain('edge_agent_terminal_degraded_reason{');
  }, 90_000);

  it('a scanner unplugged is degraded everywhere with the scanner named; "for" counts from the change, not from each publish', async () => {
    const before = Date.now();
    expect(await sim.send('fault unplug on')).toBe('ok: fault unplug on');
    const v = await settled('degraded', /^scanner r30x:\S+ (disconnected|connecting)$/);
    expectDegraded(v, 'SCANNER_NOT_READY', /scanner r30x:\S+ (disconnected|connecting)/);
    expect(v.console.sinceExact).toBe(true);
    expect(v.console.since).toBeGreaterThanOrEqual(before - 1000);
    // The agent publishes its metrics every second and its info at every retry of the scanner: "for" stays.
    await new Promise((r) => setTimeout(r, 4000));
    const later = await views();
    expect(later.console.state).toBe('degraded');
    expect(later.console.since).toBe(v.console.since);
    const seconds = Number(/edge_agent_terminal_state_seconds\{site="plant-s",terminal="gate-s"\} ([0-9.]+)/.exec(later.metrics)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(4);
    expect(await sim.send('fault unplug off')).toBe('ok: fault unplug off');
    await settled('online', null);
  }, 90_000);

  it('an upstream failing with the outbox full is degraded everywhere with both reasons', async () => {
    const dataDir = fx.dataDirs.get(KEY)!;
    const punch = await runCli(['punch', '--data', dataDir, '--code', 'E1', '--at', '2026-03-02 08:00:00']);
    expect(punch.code, punch.stderr).toBe(0);
    const v = await settled('degraded', /^outbox full/);
    expectDegraded(v, 'OUTBOX_FULL', /outbox full \(1 pending and dead\): new punches are refused/);
    await until(async () => (await views()).console.reasons.length >= 2, 30_000, 'the upstream failing too');
    const both = await views();
    expect(both.metrics).toContain(`edge_agent_terminal_degraded_reason{site="plant-s",terminal="gate-s",reason="UPSTREAM_FAILING"} 1`);
    expect(both.check.stdout).toMatch(/plant-s\/gate-s degraded: .*outbox full.*/);
  }, 90_000);
});
