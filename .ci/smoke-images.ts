/**
 * `tsx .ci/smoke-images.ts DIR`: the fixed synthetic captures the release smoke test extracts
 * templates from (a finger as PGM, an eye as PNG; seeded, so the same bytes on every machine).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePgm } from '../src/biometrics/image/pgm.js';
import { writePng } from '../src/biometrics/image/png.js';
import { renderEye } from '../src/synthetic/eye-image.js';
import { syntheticFingerImage } from '../src/synthetic/finger-image.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: tsx .ci/smoke-images.ts DIR');
writeFileSync(join(dir, 'finger.pgm'), writePgm(syntheticFingerImage(61, 1)));
writeFileSync(join(dir, 'eye.png'), writePng(renderEye(61, 1)));
