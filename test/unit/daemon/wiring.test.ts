import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { emptySecrets } from '../../../src/config/secrets.js';
import { daemonComponents, recordingComponents, terminalComponents } from '../../../src/daemon/wiring.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wiring-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the wiring: one list, in dependency order', () => {
  it('records first (outbox, time authority, uploader, policy), then the terminal, sd-notify last', () => {
    const config = parseConfig({ dataDir: dir });
    expect(recordingComponents().map((c) => c.name)).toEqual(['outbox', 'time-authority', 'uploader', 'punch-policy']);
    expect(daemonComponents(config, emptySecrets()).components.map((c) => c.name)).toEqual([
      'biometrics',
      'scanners',
      'site-sync',
      'ops',
      'control',
      'systemd',
    ]);
    const bare = terminalComponents(config, emptySecrets(), { ops: false, control: false, siteSync: false });
    expect(bare.components.map((c) => c.name)).toEqual(['biometrics', 'scanners']);
  });
});
