/**
 * The console as a wall screen, in Chromium (playwright-core) against a real broker, a real agent
 * with a simulated R30x on a pseudo-terminal, a simulated fleet of other terminals and
 * `edge-agent console`: unplugging the scanner turns the terminal amber with the reason within
 * 10 s, and `/metrics`, `fleet --check` and Home Assistant's State sensor agree; the page fits
 * 1366×768, 1920×1080 and a phone without sideways scrolling, in light and wall (kiosk) mode,
 * shows every time in the console's named zone. Its screenshots go to the test's temp folder, or to
 * docs/images/ with EDGE_AGENT_UPDATE_SCREENSHOTS=1 (how the docs' pictures are made), so a test run
 * never changes the checkout.
 */
import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedFleet } from '../bench/console-fleet-publisher.js';
import { startSimulatedModule, until, type SimulatedModule } from '../helpers/agent.js';
import { launchChromium, seriousViolations } from '../helpers/browser.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { CONSOLE_PASSWORD, homeAssistantState, startConsoleFixture, type ConsoleFixture } from '../helpers/console.js';
import { has, needs } from '../helpers/system.js';

const IMAGES = process.env.EDGE_AGENT_UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'images') : join(tmpdir(), 'screenshots');
const ROW = 'tr[data-key="plant-a/gate-1"]';

/** True when the page scrolls sideways at its current width. */
async function scrollsSideways(page: Page): Promise<boolean> {
  return (await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth')) as boolean;
}

describe.skipIf(!has('chromium', 'socat'))(`the console on a wall screen (${needs('chromium', 'socat')})`, () => {
  let fx: ConsoleFixture;
  let sim: SimulatedModule;
  let context: BrowserContext;
  let page: Page;
  let watcher: mqtt.MqttClient;
  const retained = new Map<string, string>();

  beforeAll(async () => {
    sim = await startSimulatedModule();
    fx = await startConsoleFixture({
      terminals: [{ site: 'plant-a', terminal: 'gate-1', args: ['--upstream', 'mqtt', '--scanner', `r30x:${sim.device}:57600`] }],
      console: { alerts: { lostMinutes: 0 }, homeAssistant: { sites: ['plant-a'] }, timeZone: 'Europe/Berlin' },
    });
    // Other terminals, as a site of a real fleet would look: 36 on two sites, one lost, one stopped.
    const fleet = await simulatedFleet({ url: fx.broker.url, terminals: 36, perSite: 18 });
    await fleet.publishAll();
    await fleet.close();
    watcher = await mqtt.connectAsync(fx.broker.url);
    watcher.on('message', (topic, payload) => retained.set(topic, payload.toString('utf8')));
    await watcher.subscribeAsync(['homeassistant/sensor/+/config', 'attendance/plant-a/+/state']);
    await watcher.publishAsync('attendance/site-000/gate-0003/state', 'lost', { retain: true, qos: 1 });
    await watcher.publishAsync('attendance/site-001/gate-0020/state', 'offline', { retain: true, qos: 1 });
    context = await launchChromium({ viewport: { width: 1920, height: 1080 } });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(fx.url);
    await page.fill('#password', CONSOLE_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('body[data-ready]');
    await page.waitForSelector(`${ROW}.state-online`, { timeout: 20_000 });
    await page.waitForSelector('tr[data-key="site-001/gate-0035"]');
  }, 180_000);
  afterAll(async () => {
    await context?.close();
    await watcher?.endAsync();
    await fx?.stop();
    await sim?.stop();
  });

  it('turns the terminal amber with the reason within 10 s of unplugging its scanner; /metrics, fleet --check and Home Assistant agree', async () => {
    expect(await page.textContent(`${ROW} td.c-state`)).toBe('online');
    const unplugged = Date.now();
    expect(await sim.send('fault unplug on')).toBe('ok: fault unplug on');
    await page.waitForSelector(`${ROW}.state-degraded`, { timeout: 10_000 });
    await page.waitForSelector('.tile.state-degraded[data-key="plant-a/gate-1"]', { timeout: 10_000 });
    expect(Date.now() - unplugged).toBeLessThan(10_000);
    expect(await page.textContent(`${ROW} td.c-state`)).toMatch(/^degraded: scanner r30x:\S+ (disconnected|connecting)/);
    expect(await page.getAttribute('.tile[data-key="plant-a/gate-1"]', 'title')).toMatch(/gate-1: degraded: scanner r30x:/);
    // The row's amber is the page's warning colour, the tile's the wall's.
    const background = (sel: string) => page.evaluate(`getComputedStyle(document.querySelector('${sel}')).backgroundColor`);
    expect(await background(ROW)).toBe('rgb(255, 241, 204)');
    expect(await background('.tile[data-key="plant-a/gate-1"]')).toBe('rgb(240, 180, 0)');
    await page.waitForSelector('#alerts li[data-code="TERMINAL_DEGRADED"][data-terminal="plant-a/gate-1"]', { timeout: 10_000 });
    expect(await page.textContent('#alerts li[data-code="TERMINAL_DEGRADED"]')).toMatch(/scanner r30x:/);

    const metrics = await (await fetch(new URL('/metrics', fx.url))).text();
    expect(metrics).toContain('edge_agent_terminal_state{site="plant-a",terminal="gate-1",state="degraded"} 1');
    expect(metrics).toContain('edge_agent_terminal_degraded_reason{site="plant-a",terminal="gate-1",reason="SCANNER_NOT_READY"} 1');
    const check = await runCli(['fleet', '--check', '--mqtt', fx.broker.url, '--site', 'plant-a']);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^CRITICAL: 1 of 1 terminal\(s\) lost or degraded: plant-a\/gate-1 degraded: scanner r30x:/m);
    const config = JSON.parse(retained.get('homeassistant/sensor/edge_agent_plant-a_gate-1_state/config') ?? '{}') as {
      state_topic?: string;
      value_template?: string;
    };
    expect(config.state_topic).toBe('attendance/plant-a/gate-1/state');
    expect(homeAssistantState(config, retained.get(config.state_topic!))).toBe('degraded');
  }, 60_000);

  it('fits 1366×768, 1920×1080 and a phone without sideways scrolling, times in the named zone; screenshots for the docs', async () => {
    mkdirSync(IMAGES, { recursive: true });
    expect(await page.textContent('#zone')).toBe('Times in Europe/Berlin');
    // The alerts come first, then the site overview, then the table.
    const top = async (sel: string) => (await page.locator(sel).boundingBox())!.y;
    expect(await top('#alerts-section')).toBeLessThan(await top('#overview-section'));
    expect(await top('#overview-section')).toBeLessThan(await top('#fleet'));
    // An alert's start in the zone, 24-hour: "(since 2026-03-02 09:01:12)".
    expect(await page.textContent('#alerts li[data-code="TERMINAL_DEGRADED"] .since')).toMatch(
      /^\(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/,
    );
    const shots: Array<[string, number, number, boolean]> = [
      ['console-1366x768.png', 1366, 768, false],
      ['console-1920x1080.png', 1920, 1080, false],
      ['console-phone.png', 390, 844, false],
      ['console-wall-3840x2160.png', 3840, 2160, true],
    ];
    for (const [file, width, height, kiosk] of shots) {
      await page.setViewportSize({ width, height });
      await page.goto(`${fx.url}?kiosk=${kiosk ? 1 : 0}#/`);
      await page.waitForSelector('body[data-ready]');
      await page.waitForSelector(`${ROW}.state-degraded`);
      expect(await page.evaluate("document.body.classList.contains('kiosk')")).toBe(kiosk);
      expect(await scrollsSideways(page), `${width}×${height} scrolls sideways`).toBe(false);
      // Every column of the table is inside the screen.
      const right = (await page.evaluate("document.querySelector('#fleet thead tr').getBoundingClientRect().right")) as number;
      expect(right).toBeLessThanOrEqual(width);
      expect(await page.isVisible(`${ROW} td.c-alerts`)).toBe(true);
      // On a phone the terminal, its state, for how long and its alerts; the rest is on its page.
      expect(await page.isVisible(`${ROW} td.c-pending`)).toBe(width >= 900);
      // Light and wall mode keep their contrast and names.
      if (width === 1920 || kiosk) expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(IMAGES, file) });
      expect(statSync(join(IMAGES, file)).size).toBeGreaterThan(10_000);
    }
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${fx.url}?kiosk=0#/t/plant-a/gate-1`);
    await page.waitForSelector('#terminal-state.state-degraded');
    expect(await page.textContent('#terminal-state')).toMatch(/^degraded \(scanner r30x:\S+ (disconnected|connecting)\) for \d+ s/);
    await page.screenshot({ path: join(IMAGES, 'console-terminal.png') });
  }, 120_000);

  it('turns it green again once the scanner is back, in the page and in /metrics', async () => {
    await page.goto(`${fx.url}?kiosk=0#/`);
    expect(await sim.send('fault unplug off')).toBe('ok: fault unplug off');
    await page.waitForSelector(`${ROW}.state-online`, { timeout: 20_000 });
    await until(async () =>
      (await (await fetch(new URL('/metrics', fx.url))).text()).includes(
        'edge_agent_terminal_state{site="plant-a",terminal="gate-1",state="online"} 1',
      ),
    );
    expect(await page.textContent(`${ROW} td.c-state`)).toBe('online');
  }, 60_000);
});
