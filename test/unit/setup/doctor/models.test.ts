// The models check loading the bundled models is an integration test (doctor-checks): it loads ONNX.
import { describe, expect, it } from 'vitest';
import { checkModels } from '../../../../src/setup/doctor/models.js';

describe('doctor: the models check', () => {
  it('is not run where no scanner gives images', async () => {
    expect(await checkModels(false)).toEqual({
      name: 'models',
      status: 'warn',
      detail: 'not checked: no scanner is configured',
      hint: 'nothing to do until scanners are added',
    });
  });
});
