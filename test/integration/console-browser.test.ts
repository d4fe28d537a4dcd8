/**
 * The operations console in a real browser: Debian's Chromium driven by playwright-core, against
 * a real broker, two real agents and `edge-agent console`. The page shows both terminals, turns
 * the one killed with SIGKILL lost and raises its alert within seconds, sends a signed ping from
 * a terminal's page and shows the answer, and passes an axe-core scan with no serious or critical
 * violation on both views.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { has } from '../helpers/system.js';
import { launchChromium, seriousViolations } from '../helpers/browser.js';
import { CONSOLE_PASSWORD, startConsoleFixture, type ConsoleFixture } from '../helpers/console.js';

describe.skipIf(!has('chromium'))('the operations console in Chromium (needs chromium)', () => {
  let fx: ConsoleFixture;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    fx = await startConsoleFixture({
      terminals: [
        { site: 'plant-a', terminal: 'gate-1' },
        { site: 'plant-a', terminal: 'gate-2' },
      ],
      console: { alerts: { lostMinutes: 0 } },
    });
    context = await launchChromium();
    page = context.pages()[0] ?? (await context.newPage());
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await fx?.stop();
  });

  it('logs in and shows both terminals, grouped by site, with no serious accessibility violation', async () => {
    await page.goto(fx.url);
    expect(page.url()).toMatch(/\/login$/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.fill('#password', CONSOLE_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('body[data-ready]');
    await page.waitForSelector('tr[data-key="plant-a/gate-2"]');
    expect(
      await page.locator('tbody[data-site="plant-a"] tr[data-key]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-key'))),
    ).toEqual(['plant-a/gate-1', 'plant-a/gate-2']);
    // Selectors, not waitForFunction: a string predicate is polled with eval, which the page's CSP forbids.
    await page.waitForSelector('tr.state-online[data-key="plant-a/gate-1"]');
    await page.waitForSelector('tr.state-online[data-key="plant-a/gate-2"]');
    expect(await page.textContent('tr[data-key="plant-a/gate-1"] td.c-state')).toBe('online');
    expect(await page.textContent('#summary')).toContain('2 online');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('filters and sorts the table', async () => {
    await page.fill('#filter', 'gate-2');
    await page.waitForSelector('tr[data-key="plant-a/gate-1"]', { state: 'hidden' });
    expect(await page.isVisible('tr[data-key="plant-a/gate-2"]')).toBe(true);
    await page.fill('#filter', '');
    await page.click('button[data-sort="terminal"]');
    await page.waitForSelector('tr.site-row + tr[data-key="plant-a/gate-2"] + tr[data-key="plant-a/gate-1"]');
    expect(await page.getAttribute('th:has(button[data-sort="terminal"])', 'aria-sort')).toBe('descending');
  });

  it('turns a terminal killed with SIGKILL lost within seconds and raises its alert', async () => {
    const killedAt = Date.now();
    fx.agents.get('plant-a/gate-2')!.kill('SIGKILL');
    await page.waitForSelector('tr.state-lost[data-key="plant-a/gate-2"]', { timeout: 15_000 });
    const seconds = (Date.now() - killedAt) / 1000;
    expect(seconds).toBeLessThan(15);
    expect(await page.textContent('tr[data-key="plant-a/gate-2"] td.c-state')).toBe('lost');
    await page.waitForSelector('#alerts li[data-code="TERMINAL_LOST"][data-terminal="plant-a/gate-2"]', { timeout: 10_000 });
    expect(await page.textContent('#alerts li[data-code="TERMINAL_LOST"]')).toContain('critical');
    expect(await page.textContent('tr[data-key="plant-a/gate-2"] td.c-alerts')).toBe('1 critical');
    // The other terminal is untouched.
    expect(await page.textContent('tr[data-key="plant-a/gate-1"] td.c-state')).toBe('online');
    expect(await page.textContent('#summary')).toContain('1 lost');
    // The lost row and the alert keep their contrast and names.
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("sends a signed ping from a terminal's page and shows the answer", async () => {
    await page.click('tr[data-key="plant-a/gate-1"] th a');
    await page.waitForSelector('#terminal-view:not([hidden])');
    expect(await page.textContent('#terminal-title')).toBe('gate-1 (site plant-a)');
    await page.waitForSelector('#commands:not([hidden])');
    await page.click('button[data-command="ping"]');
    const answer = await page.waitForSelector('#answer p[data-command="ping"]', { timeout: 15_000 });
    expect(await answer.getAttribute('data-status')).toBe('ok');
    expect(await page.textContent('#answer')).toMatch(/ping: ok \(transaction .+\)[\s\S]*"pong": true[\s\S]*"terminal": "gate-1"/);
    await page.waitForSelector('#charts figure svg');
    expect(await seriousViolations(page)).toEqual([]);
    // The lost terminal's page says so.
    await page.goto(`${fx.url}#/t/plant-a/gate-2`);
    await page.waitForSelector('#terminal-state.state-lost');
    expect(await page.textContent('#terminal-title')).toBe('gate-2 (site plant-a)');
    expect(await page.textContent('#terminal-state')).toMatch(/^lost for \d+ s/);
  });
});
