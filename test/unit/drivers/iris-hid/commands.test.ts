// The iris protocol's per-message codecs, shared by the driver and the simulator.
import { describe, expect, it } from 'vitest';
import { IRIS_COMMANDS, IrisCommands, IrisFeatures, irisCommandName } from '../../../../drivers/iris-hid/commands.js';
import { decodeCommand, encodeCommand, IrisCommand, ReportId } from '../../../../drivers/iris-hid/protocol.js';

describe('iris message codecs', () => {
  it('carry each command request through an output report and back, found by command code', () => {
    const req = { kind: 7, width: 320, height: 240, timeoutMs: 4000, minQuality: 60 };
    const report = encodeCommand(IrisCommands.StartCapture.command, 9, IrisCommands.StartCapture.encodeRequest(req));
    const cmd = decodeCommand(report);
    expect(IRIS_COMMANDS.get(cmd.command)).toBe(IrisCommands.StartCapture);
    expect(IrisCommands.StartCapture.decodeRequest(cmd.params)).toEqual(req);
    expect(IrisCommands.StartCapture.decodeRequest(Buffer.alloc(3))).toBeNull();
    for (const name of ['StopCapture', 'ResendResult'] as const) {
      expect(IrisCommands[name].command).toBe(IrisCommand[name]);
      expect(IrisCommands[name].encodeRequest({}).length).toBe(0);
      expect(irisCommandName(IrisCommand[name])).toBe(name);
    }
    expect(irisCommandName(0x7f)).toBe('0x7f');
  });

  it('carry each feature report through its bytes and back under its report id', () => {
    const info = {
      protocolVersion: 1,
      model: 'EYE',
      firmware: '2.0',
      serial: 'S1',
      sensorWidth: 640,
      sensorHeight: 480,
      ppi: 460,
      capabilities: 3,
    };
    expect(IrisFeatures.DeviceInfo.decode(IrisFeatures.DeviceInfo.encode(info))).toEqual(info);
    expect(IrisFeatures.Lights.decode(IrisFeatures.Lights.encode({ ir: 200, color: 2, blink: 1 }))).toEqual({
      ir: 200,
      color: 2,
      blink: 1,
    });
    expect(IrisFeatures.Status.decode(IrisFeatures.Status.encode({ state: 2, eyeInView: true, lastError: 3 }))).toEqual({
      state: 2,
      eyeInView: true,
      lastError: 3,
    });
    expect([IrisFeatures.DeviceInfo.reportId, IrisFeatures.Lights.reportId, IrisFeatures.Status.reportId]).toEqual([
      ReportId.DeviceInfo,
      ReportId.Lights,
      ReportId.Status,
    ]);
    expect(() => IrisFeatures.Lights.decode(IrisFeatures.Status.encode({ state: 0, eyeInView: false, lastError: 0 }))).toThrow(
      expect.objectContaining({ code: 'DRIVER_FRAME' }),
    );
  });
});
