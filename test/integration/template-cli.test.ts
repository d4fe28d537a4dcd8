import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { encodeIrisTemplate } from '../../src/biometrics/iris/iris-code.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../src/synthetic/iris-code.js';
import { encodeIso19794_2 } from '../../src/biometrics/finger/iso19794-2.js';
import { compareFingerTemplates } from '../../src/biometrics/finger/matcher.js';
import { impression, impressionTemplate, syntheticFinger } from '../../src/synthetic/finger.js';

let dir: string;
const iris = (eye: number, sample: number) => syntheticIrisSample(syntheticIrisEye(eye), sample).code;
const finger = (f: number, imp: number) => impressionTemplate(impression(syntheticFinger(f), imp));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-cli-'));
  writeFileSync(join(dir, 'a1.iris'), encodeIrisTemplate(iris(1, 1)));
  writeFileSync(join(dir, 'a2.iris'), encodeIrisTemplate(iris(1, 2)));
  writeFileSync(join(dir, 'b1.iris'), encodeIrisTemplate(iris(2, 1)));
  writeFileSync(join(dir, 'short.iris'), encodeIrisTemplate(iris(3, 1)).subarray(0, 100));
  writeFileSync(join(dir, 'f1.fmr'), encodeIso19794_2(finger(1, 0)));
  writeFileSync(join(dir, 'f1b.fmr'), encodeIso19794_2(finger(1, 1)));
  writeFileSync(join(dir, 'f2.fmr'), encodeIso19794_2(finger(2, 0)));
  writeFileSync(join(dir, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('edge-agent template', () => {
  it('info says what an iris template holds, and nothing of the code itself', async () => {
    const r = await runCli(['template', 'info', join(dir, 'a1.iris'), '--json']);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({ modality: 'iris', format: 'iris-code-v1', version: 1, bytes: 528, rings: 8, angles: 128, codeBits: 2048 });
    expect(info.quality).toBe(iris(1, 1).quality);
    expect(Object.keys(info)).not.toContain('code');
    const human = await runCli(['template', 'info', join(dir, 'a1.iris')]);
    expect(human.stdout).toMatch(/format\s+iris-code-v1/);
  });

  it('compare scores a genuine pair as accept and an impostor pair as reject', async () => {
    const g = await runCli(['template', 'compare', join(dir, 'a1.iris'), join(dir, 'a2.iris'), '--json']);
    expect(g.code).toBe(0);
    const genuine = JSON.parse(g.stdout);
    expect(genuine).toMatchObject({ modality: 'iris', decision: 'accept', threshold: 0.32 });
    expect(genuine.score).toBeCloseTo(compareIrisCodes(iris(1, 1), iris(1, 2)).hd, 12);
    const i = await runCli(['template', 'compare', join(dir, 'a1.iris'), join(dir, 'b1.iris')]);
    expect(i.code).toBe(0);
    expect(i.stdout).toMatch(/^iris score 0\.\d{4} .*: reject\n$/);
    const strict = await runCli(['template', 'compare', join(dir, 'a1.iris'), join(dir, 'a2.iris'), '--json', '--threshold', '0.01']);
    expect(JSON.parse(strict.stdout).decision).toBe('reject');
  });

  it('info and compare read ISO 19794-2 finger records, and refuse to compare a finger with an iris', async () => {
    const [info, genuine, impostor, mixed] = await Promise.all([
      runCli(['template', 'info', join(dir, 'f1.fmr'), '--json']),
      runCli(['template', 'compare', join(dir, 'f1.fmr'), join(dir, 'f1b.fmr'), '--json']),
      runCli(['template', 'compare', join(dir, 'f1.fmr'), join(dir, 'f2.fmr'), '--json']),
      runCli(['template', 'compare', join(dir, 'f1.fmr'), join(dir, 'a1.iris')]),
    ]);
    expect(info.code).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({
      modality: 'finger',
      format: 'iso19794-2',
      version: 'ISO/IEC 19794-2:2005',
      views: 1,
      minutiae: String(finger(1, 0).minutiae.length),
    });
    const g = JSON.parse(genuine.stdout);
    expect(g).toMatchObject({ modality: 'finger', decision: 'accept', threshold: 40 });
    expect(g.score).toBeCloseTo(compareFingerTemplates(finger(1, 0), finger(1, 1)), 9);
    expect(JSON.parse(impostor.stdout)).toMatchObject({ modality: 'finger', decision: 'reject' });
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain('BIOMETRICS_MODALITY_MISMATCH');
    expect(mixed.stderr).toMatch(/finger template .* iris template/);
  });

  it('refuses malformed and unknown files with the offset and a hint', async () => {
    const r = await runCli(['template', 'compare', join(dir, 'a1.iris'), join(dir, 'short.iris')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('BIOMETRICS_TEMPLATE_MALFORMED');
    expect(r.stderr).toContain('at byte 100');
    const u = await runCli(['template', 'info', join(dir, 'photo.jpg')]);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain('BIOMETRICS_TEMPLATE_UNKNOWN_FORMAT');
    expect(u.stderr).toContain('ff d8 ff e0');
    const usage = await runCli(['template', 'compare', join(dir, 'a1.iris')]);
    expect(usage.code).toBe(2);
  });

  it('compare --pairs prints one score per pair in order, and an error line for a bad pair', async () => {
    writeFileSync(
      join(dir, 'pairs.tsv'),
      ['a1.iris\ta2.iris', '# a comment', 'a1.iris\tb1.iris', '', 'a2.iris\tmissing.iris', `${join(dir, 'b1.iris')}\ta2.iris`].join('\n'),
    );
    const r = await runCli(['template', 'compare', '--pairs', join(dir, 'pairs.tsv')]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(Number(lines[0])).toBeCloseTo(compareIrisCodes(iris(1, 1), iris(1, 2)).hd, 12);
    expect(Number(lines[1])).toBeCloseTo(compareIrisCodes(iris(1, 1), iris(2, 1)).hd, 12);
    expect(lines[2]).toMatch(/^error CLI_FILE_UNREADABLE/);
    expect(Number(lines[3])).toBeCloseTo(compareIrisCodes(iris(2, 1), iris(1, 2)).hd, 12);
    const j = await runCli(['template', 'compare', '--pairs', join(dir, 'pairs.tsv'), '--json']);
    const objs = j.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(objs.map((o) => o.line)).toEqual([1, 3, 5, 6]);
    expect(objs[2].error.code).toBe('CLI_FILE_UNREADABLE');
    expect(objs[0].decision).toBe('accept');
  });
});
