/**
 * Chromium for the console's browser test and benchmark: Debian's `chromium` (the full CI leg
 * installs it) driven by playwright-core, headless, with a fresh profile in the caller's temp
 * folder and nothing fetched from Google's services.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
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
