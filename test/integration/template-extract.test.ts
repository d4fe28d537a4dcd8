import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { writePgm } from '../../src/biometrics/image/pgm.js';
import { writePng } from '../../src/biometrics/image/png.js';
import { resize } from '../../src/biometrics/image/resample.js';
import { decodeFingerTemplate } from '../../src/biometrics/finger/iso19794-2.js';
import { decodeIrisTemplate } from '../../src/biometrics/iris/iris-code.js';
import { syntheticFingerImage } from '../../src/synthetic/finger-image.js';
import { renderEye } from '../../src/synthetic/eye-image.js';

describe('edge-agent template extract', () => {
  const dir = mkdtempSync(join(tmpdir(), 'extract-'));

  it('turns a PGM fingerprint into an ISO 19794-2 record and a PNG eye into an iris code', async () => {
    writeFileSync(join(dir, 'f.pgm'), writePgm(syntheticFingerImage(61, 1)));
    writeFileSync(join(dir, 'e.png'), writePng(renderEye(61, 1)));
    const f = await runCli([
      'template',
      'extract',
      '--modality',
      'finger',
      '--image',
      join(dir, 'f.pgm'),
      '--out',
      join(dir, 'f.iso'),
      '--json',
    ]);
    expect(f.code).toBe(0);
    const summary = JSON.parse(f.stdout) as { minutiae: number; bytes: number; quality: number; qualityFeatures: Record<string, number> };
    const t = decodeFingerTemplate(readFileSync(join(dir, 'f.iso')));
    expect(t.minutiae.length).toBe(summary.minutiae);
    expect(summary.minutiae).toBeGreaterThan(10);
    // The measures behind the quality score, for a technician judging a sensor's captures.
    expect(Object.keys(summary.qualityFeatures).sort()).toEqual(['areaMm2', 'clarity', 'coherence', 'minutiae', 'sharpness']);
    expect(summary.qualityFeatures.minutiae).toBe(summary.minutiae);
    expect(t.quality).toBe(summary.quality);
    expect(statSync(join(dir, 'f.iso')).mode & 0o777).toBe(0o600);
    const e = await runCli(['template', 'extract', '--modality', 'iris', '--image', join(dir, 'e.png'), '--out', join(dir, 'e.iris')]);
    expect(e.code).toBe(0);
    expect(decodeIrisTemplate(readFileSync(join(dir, 'e.iris'))).quality).toBeGreaterThan(0);
  }, 60_000);

  it('reads a fingerprint at the resolution the image states, and warns when it has to assume 500 dpi', async () => {
    const im = syntheticFingerImage(63, 1);
    const big = resize(im, im.width * 2, im.height * 2);
    writeFileSync(join(dir, 'stated.pgm'), writePgm({ ...big, dpi: 1000 }));
    writeFileSync(join(dir, 'silent.png'), writePng(big));
    const stated = await runCli([
      'template',
      'extract',
      '--modality',
      'finger',
      '--image',
      join(dir, 'stated.pgm'),
      '--out',
      join(dir, 'stated.iso'),
      '--json',
    ]);
    expect(stated.code).toBe(0);
    expect(JSON.parse(stated.stdout)).toMatchObject({ dpi: 1000, dpiSource: 'image' });
    expect(stated.stderr).not.toMatch(/warning/);
    const silent = await runCli([
      'template',
      'extract',
      '--modality',
      'finger',
      '--image',
      join(dir, 'silent.png'),
      '--out',
      join(dir, 'silent.iso'),
      '--json',
    ]);
    expect(silent.code).toBe(0);
    expect(JSON.parse(silent.stdout)).toMatchObject({ dpi: 500, dpiSource: 'assumed' });
    expect(silent.stderr).toMatch(/warning: .*silent\.png does not say its resolution: assumed 500 dpi; pass --dpi N/);
    const given = await runCli([
      'template',
      'extract',
      '--modality',
      'finger',
      '--image',
      join(dir, 'silent.png'),
      '--out',
      join(dir, 'given.iso'),
      '--dpi',
      '1000',
      '--json',
    ]);
    expect(JSON.parse(given.stdout)).toMatchObject({ dpi: 1000, dpiSource: 'given' });
    // Same finger, same resolution: the stated and the given one give the same template.
    expect(readFileSync(join(dir, 'given.iso'))).toEqual(readFileSync(join(dir, 'stated.iso')));
  }, 60_000);

  it('refuses a closed eye with the reason and writes nothing', async () => {
    writeFileSync(join(dir, 'c.png'), writePng(renderEye(62, 1, { closed: true })));
    const r = await runCli(['template', 'extract', '--modality', 'iris', '--image', join(dir, 'c.png'), '--out', join(dir, 'c.iris')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('BIOMETRICS_UNUSABLE_CAPTURE');
    expect(r.stderr).toMatch(/closed/);
    expect(() => statSync(join(dir, 'c.iris'))).toThrow();
    const u = await runCli(['template', 'extract', '--modality', 'palm', '--image', join(dir, 'c.png'), '--out', join(dir, 'x')]);
    expect(u.code).toBe(2);
  }, 60_000);
});
