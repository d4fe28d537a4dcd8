/**
 * Chromium for the console's browser test and benchmark: Debian's `chromium` (the full CI leg
 * installs it) driven by playwright-core, headless, with a fresh profile in the caller's temp
 * folder and nothing fetched from Google's services.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { which } from './system.js';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(options: { viewport?: { width: number; height: number } } = {}): Promise<BrowserContext> {
  const executablePath = which('chromium');
  if (!executablePath) throw new Error("chromium is needed: declare the suite with describe.skipIf(!has('chromium'))");
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'chromium-profile-')), {
    executablePath,
    args: CHROMIUM_ARGS,
    viewport: options.viewport ?? { width: 1400, height: 900 },
  });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's scan of the page as it is; the serious and critical violations, described. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(source);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join('; ')})`,
    );
}
