// `edge-agent identify --template FILE`: a template file identified against the terminal's
// encrypted template cache, without a running agent (the indexes built in the command, the index
// snapshot written for the next start) and through a running agent's control socket
// (identify-template), which loads that snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { encodeIrisTemplate } from '../../src/biometrics/iris/iris-code.js';
import { irisIdentificationThreshold } from '../../src/biometrics/iris/iris-decision.js';
import { encodeIso19794_2 } from '../../src/biometrics/finger/iso19794-2.js';
import { callDaemon, controlSocketPath } from '../../src/daemon/control-socket.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { INDEX_SNAPSHOT_FILE } from '../../src/store/index-snapshot.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { impression, impressionTemplate, syntheticFinger } from '../../src/synthetic/finger.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../src/synthetic/iris-code.js';
import { runCli } from '../helpers/cli.js';
import { startAgent, stopChild, terminalDir, type TerminalDir } from '../helpers/agent.js';

const irisBytes = (eye: number, sample: number) => encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eye), sample).code);
const fingerBytes = (finger: number, imp: number) => encodeIso19794_2(impressionTemplate(impression(syntheticFinger(finger), imp)));

let dir: TerminalDir;
let flags: string[];
let agent: ChildProcess | null = null;

beforeAll(async () => {
  dir = terminalDir({ extra: { apiKey: 'k', apiSecret: 's' } });
  // Nothing to deliver: an API nobody listens on is enough for `run`.
  flags = ['--data', dir.dataDir, '--api', 'http://127.0.0.1:9'];
  const db = await openAgentDatabase(dir.dataDir);
  try {
    const cache = await TemplateCache.open(db, { key: dir.templateKey });
    await cache.upsertUser({ employeeCode: 'E7', displayName: 'Ada Lovelace' });
    const batch = [];
    for (let e = 0; e < 12; e++)
      batch.push({
        employeeCode: `E${e}`,
        modality: 'iris' as const,
        position: 'left',
        format: 'iris-code-v1' as const,
        data: irisBytes(3000 + e, 1),
      });
    for (let f = 0; f < 6; f++)
      batch.push({
        employeeCode: `E${f}`,
        modality: 'finger' as const,
        position: 'right-index',
        format: 'iso19794-2' as const,
        data: fingerBytes(3100 + f, 0),
      });
    await cache.addTemplates(batch);
  } finally {
    await db.close();
  }
  writeFileSync(join(dir.dataDir, 'probe-iris.bin'), irisBytes(3007, 4));
  writeFileSync(join(dir.dataDir, 'probe-finger.ist'), fingerBytes(3104, 1));
  writeFileSync(join(dir.dataDir, 'stranger.bin'), irisBytes(9999, 1));
  writeFileSync(join(dir.dataDir, 'garbage.bin'), Buffer.from('not a template at all'));
});

afterAll(async () => {
  if (agent) await stopChild(agent);
});

describe('edge-agent identify --template', () => {
  it('without a running agent: identifies a file (modality from the file), names nobody for a stranger, refuses garbage', async () => {
    const iris = await runCli(['identify', '--template', join(dir.dataDir, 'probe-iris.bin'), '--json', ...flags], { timeoutMs: 120_000 });
    expect(iris.code, iris.stderr).toBe(0);
    expect(JSON.parse(iris.stdout)).toMatchObject({ employeeCode: 'E7', name: 'Ada Lovelace', modality: 'iris', decision: 'accept' });
    // Twelve iris templates: a match needs the distance the 1:N decision allows for that many (iris-decision.ts).
    expect(JSON.parse(iris.stdout).needed).toBeCloseTo(irisIdentificationThreshold(0.32, 12), 12);
    expect(JSON.parse(iris.stdout).needed).toBeLessThan(0.32);
    // The command built the indexes from the cache and left the encrypted snapshot for the next start.
    expect(statSync(join(dir.dataDir, INDEX_SNAPSHOT_FILE)).mode & 0o777).toBe(0o600);

    const stranger = await runCli(['identify', '--template', join(dir.dataDir, 'stranger.bin'), ...flags], { timeoutMs: 120_000 });
    expect(stranger.code).toBe(1);
    expect(stranger.stdout).toMatch(
      /not identified: nobody enrolled here matches \(best score [0-9.]+; with this many iris templates enrolled a match needs 0\.302 or less \(biometrics\.irisFpir\), iris/,
    );

    const garbage = await runCli(['identify', '--template', join(dir.dataDir, 'garbage.bin'), ...flags], { timeoutMs: 120_000 });
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/BIOMETRICS_TEMPLATE_/);

    const missing = await runCli(['identify', '--template', join(dir.dataDir, 'nope.bin'), ...flags]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/CLI_USAGE: cannot read .*nope\.bin: ENOENT/);
  }, 240_000);

  it('through the running agent, which loaded the snapshot; the control socket refuses a malformed request', async () => {
    expect(existsSync(join(dir.dataDir, INDEX_SNAPSHOT_FILE))).toBe(true);
    agent = await startAgent([...flags]);
    const finger = await runCli(['identify', '--template', join(dir.dataDir, 'probe-finger.ist'), '--json', ...flags], {
      timeoutMs: 120_000,
    });
    expect(finger.code, finger.stderr).toBe(0);
    expect(JSON.parse(finger.stdout)).toMatchObject({ employeeCode: 'E4', modality: 'finger', decision: 'accept' });
    await expect(
      callDaemon(controlSocketPath({ dataDir: dir.dataDir }), 'identify-template', { modality: 'nose', template: 'AAAA' }),
    ).rejects.toMatchObject({ code: 'AGENT_CONTROL_BAD_REQUEST' });
    await expect(
      callDaemon(controlSocketPath({ dataDir: dir.dataDir }), 'identify-template', { modality: 'iris', template: 'A'.repeat(100_000) }),
    ).rejects.toMatchObject({ code: 'AGENT_CONTROL_BAD_REQUEST' });
    await expect(
      callDaemon(controlSocketPath({ dataDir: dir.dataDir }), 'identify-template', {
        modality: 'iris',
        template: Buffer.from('nope').toString('base64'),
      }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^BIOMETRICS_TEMPLATE_/) });
  }, 240_000);
});
