import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSecrets, emptySecrets, generateKey } from '../../../../src/config/secrets.js';
import { runDoctor } from '../../../../src/setup/doctor/runner.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import { configFiles } from '../../../helpers/config.js';

const { dir, file } = configFiles('doctor-runner-');
const detectClock = async () => ({ synchronized: true, source: 'timedatectl', detail: 'yes' });
const NOT_CHECKED = ['secrets', 'api-token', 'mqtt', 'ops-key', 'scanners', 'template-key', 'database', 'file-modes', 'outbox'];

describe('doctor: the checks in their order', () => {
  it('no config: the config fails naming where it looked, the checks that need one are not checked, the clock is', async () => {
    const report = await runDoctor({
      config: { env: {} },
      location: { file: null, origin: null, looked: ['--config (not given)'], note: null },
      detectClock,
    });
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => c.name)).toEqual(['config', ...NOT_CHECKED, 'clock']);
    expect(report.checks.slice(1, -1).every((c) => c.status === 'warn' && c.detail === 'not checked: there is no config')).toBe(true);
    expect(report.checks.at(-1)).toMatchObject({ name: 'clock', status: 'pass' });
    expect(report.clock).toBeUndefined();
  });

  it('an invalid config says so in each check it stops', async () => {
    const report = await runDoctor({ config: { file: file('terminal: {mode: sideways}\n'), env: {} }, detectClock });
    expect(report.checks.map((c) => c.name)).toEqual(['config', ...NOT_CHECKED, 'clock']);
    expect(report.checks[1]).toMatchObject({ status: 'warn', detail: 'not checked: the config is not valid' });
  });

  it('a valid config: every check in order, ok only when none failed, the clock figures beside', async () => {
    const data = join(dir, 'data');
    const f = file(`dataDir: ${data}\nupstream: [mqtt]\n`);
    writeSecrets(join(data, 'secrets.yaml'), { ...emptySecrets(), templateKey: generateKey() });
    await (await openAgentDatabase(data)).close();
    let asked: string | null = null;
    const report = await runDoctor({
      config: { file: f, env: {} },
      credentialsDir: null,
      detectClock,
      daemonRunning: async (d) => {
        asked = d;
        return false;
      },
    });
    expect(asked).toBe(data);
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ['config', 'pass'],
      ['secrets', 'pass'],
      ['api-token', 'warn'],
      ['mqtt', 'fail'], // upstream mqtt without mqtt.url
      ['ops-key', 'pass'],
      ['scanners', 'warn'],
      ['template-key', 'warn'],
      ['models', 'warn'],
      ['database', 'pass'],
      ['file-modes', 'pass'],
      ['disk', 'pass'],
      ['clock', 'pass'],
      ['outbox', 'pass'],
    ]);
    expect(report.ok).toBe(false);
    expect(report.clock).toMatchObject({ trusted: true, steps: 0 });
  });

  it('ok when nothing failed, warnings allowed; no clock figures without a database', async () => {
    const data = join(dir, 'quiet');
    mkdirSync(data, { mode: 0o700 });
    writeSecrets(join(data, 'secrets.yaml'), { ...emptySecrets(), templateKey: generateKey() });
    const report = await runDoctor({
      config: { file: file(`dataDir: ${data}\nupstream: []\n`), env: {} },
      credentialsDir: null,
      detectClock,
    });
    expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(report.checks.filter((c) => c.status === 'warn').length).toBeGreaterThan(0);
    expect(report.ok).toBe(true);
    expect(report.clock).toBeUndefined();
  });
});
