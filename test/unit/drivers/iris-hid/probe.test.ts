import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { probeIrisHid } from '../../../../drivers/iris-hid/probe.js';
import { IrisHidSimulator } from '../../../../drivers/iris-hid/simulator.js';
import { testEye } from './eye.fixture.js';

describe('iris HID discovery probe', () => {
  it('identifies the simulated camera', async () => {
    const sim = new IrisHidSimulator({ images: testEye, pace: false, model: 'EYECAM-9', firmware: '2.1', serial: 'S-77' });
    expect(await probeIrisHid('sim:iris', { open: sim.opener })).toEqual({
      model: 'EYECAM-9',
      firmware: '2.1',
      serial: 'S-77',
      capacity: null,
      templates: null,
    });
  });

  it('says null for a HID device that is not an iris camera, and for one that cannot be opened', async () => {
    const keyboard = Object.assign(new EventEmitter(), {
      write: async () => 0,
      sendFeatureReport: async () => 0,
      getFeatureReport: async () => {
        throw new Error('could not get feature report from device');
      },
      close: async () => undefined,
    });
    expect(await probeIrisHid('sim:kbd', { open: async () => keyboard })).toBeNull();
    expect(await probeIrisHid('/dev/hidraw-does-not-exist')).toBeNull();
  });
});
