import { describe, expect, it } from 'vitest';
import { resampleToDpi, resize } from '../../../../src/biometrics/image/resample.js';
import { ramp } from './gray-image.fixture.js';

describe('resampling', () => {
  it('resamples to 500 dpi', () => {
    const img = resampleToDpi(ramp(100, 50), 1000);
    expect([img.width, img.height]).toEqual([50, 25]);
    expect(resize(img, 50, 25)).toBe(img);
  });
});
