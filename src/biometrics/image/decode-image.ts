/**
 * Reads an image file's bytes, whatever the format we accept (PGM or PNG).
 */
import { AgentError } from '../../core/errors.js';
import type { GrayImage } from './gray-image.js';
import { isPgm, readPgm } from './pgm.js';
import { isPng, readPng } from './png.js';

export function decodeImage(bytes: Uint8Array): GrayImage {
  if (isPgm(bytes)) return readPgm(bytes);
  if (isPng(bytes)) return readPng(bytes);
  throw new AgentError(
    'BIOMETRICS_BAD_IMAGE',
    'the image is neither PGM (P5/P2) nor PNG',
    { bytes: bytes.length },
    { hint: 'convert the image to PGM or PNG grayscale' },
  );
}
