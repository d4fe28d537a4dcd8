// Each GT-521 command's codec, the one both the driver and the simulator use: requests and answers
// survive the trip through parameters and data packets, with the programming guide's values.
import { describe, expect, it } from 'vitest';
import { GT521_COMMANDS, Gt521, type Gt521CommandCodec } from '../../../../drivers/gt521/commands.js';
import {
  DEVINFO_SIZE,
  ENROLL_NO_SAVE,
  Gt521Command,
  IMAGE_SIZE,
  NackCode,
  RAW_IMAGE_SIZE,
  SET_TEMPLATE_NO_DUP_CHECK,
  TEMPLATE_SIZE,
} from '../../../../drivers/gt521/protocol.js';

const template = Buffer.alloc(TEMPLATE_SIZE, 7);
const samples: {
  [K in keyof typeof Gt521]: (typeof Gt521)[K] extends Gt521CommandCodec<infer Req, infer Res> ? Array<[Req, Res]> : never;
} = {
  Open: [
    [{ extraInfo: true }, { firmwareVersion: 0x20150930, isoAreaMaxSize: 0x1c000, serialNumber: Buffer.alloc(16, 0xab) }],
    [{ extraInfo: false }, null],
  ],
  Close: [[{}, {}]],
  ChangeBaud: [[{ baud: 115200 }, {}]],
  CmosLed: [
    [{ on: true }, {}],
    [{ on: false }, {}],
  ],
  GetEnrollCount: [[{}, { count: 2999 }]],
  CheckEnrolled: [[{ slot: 42 }, {}]],
  EnrollStart: [
    [{ slot: 7 }, {}],
    [{ slot: null }, {}],
  ],
  Enroll1: [[{}, {}]],
  Enroll2: [[{}, {}]],
  Enroll3: [[{ returnsTemplate: false }, { template: null }]],
  IsPressFinger: [
    [{}, { pressed: true }],
    [{}, { pressed: false }],
  ],
  DeleteID: [[{ slot: 3 }, {}]],
  DeleteAll: [[{}, {}]],
  Verify: [[{ slot: 3 }, {}]],
  Identify: [[{}, { slot: 1234 }]],
  VerifyTemplate: [[{ slot: 9 }, {}]],
  IdentifyTemplate: [[{}, { slot: 0 }]],
  CaptureFinger: [
    [{ best: true }, {}],
    [{ best: false }, {}],
  ],
  MakeTemplate: [[{}, { data: template }]],
  GetImage: [[{}, { data: Buffer.alloc(IMAGE_SIZE, 1) }]],
  GetRawImage: [[{}, { data: Buffer.alloc(RAW_IMAGE_SIZE, 2) }]],
  GetTemplate: [[{ slot: 2999 }, { data: template }]],
  SetTemplate: [
    [{ slot: 5, checkDuplicate: true }, {}],
    [{ slot: 5, checkDuplicate: false }, {}],
  ],
};

describe('GT-521 command codecs', () => {
  it('carry every request and answer through parameter and data and back', () => {
    for (const [name, cases] of Object.entries(samples) as Array<[keyof typeof Gt521, Array<[never, never]>]>) {
      const cmd = Gt521[name] as Gt521CommandCodec<unknown, unknown>;
      expect(cmd.code, name).toBe(Gt521Command[name]);
      expect(GT521_COMMANDS.get(cmd.code)).toBe(cmd);
      for (const [req, res] of cases) {
        expect(cmd.decodeRequest(cmd.encodeRequest(req)), name).toEqual(req);
        const { parameter, data } = cmd.encodeResponse(res);
        expect(data?.length, `${name} data`).toBe(cmd.moduleData?.(req));
        expect(cmd.decodeResponse(parameter, data ? Buffer.from(data) : null), name).toEqual(res);
      }
    }
  });

  it('use the programming guide values: no-save enrolment, the duplicate-check flag, pressed = 0, the Open info', () => {
    expect(Gt521.EnrollStart.encodeRequest({ slot: null })).toBe(ENROLL_NO_SAVE);
    expect(Gt521.SetTemplate.encodeRequest({ slot: 5, checkDuplicate: false })).toBe((5 | SET_TEMPLATE_NO_DUP_CHECK) >>> 0);
    expect(Gt521.IsPressFinger.encodeResponse({ pressed: false }).parameter).toBe(NackCode.FingerIsNotPressed);
    expect(Gt521.Open.moduleData!({ extraInfo: true })).toBe(DEVINFO_SIZE);
    expect(Gt521.Enroll3.moduleData!({ returnsTemplate: true })).toBe(TEMPLATE_SIZE);
    expect([Gt521.SetTemplate.hostData, Gt521.VerifyTemplate.hostData, Gt521.IdentifyTemplate.hostData]).toEqual([
      TEMPLATE_SIZE,
      TEMPLATE_SIZE,
      TEMPLATE_SIZE,
    ]);
    expect([Gt521.DeleteAll.retryable, Gt521.SetTemplate.retryable, Gt521.GetTemplate.retryable]).toEqual([false, false, true]);
  });

  it('names an ACK that lost its data packet', () => {
    expect(() => Gt521.GetTemplate.decodeResponse(0, null)).toThrow(expect.objectContaining({ code: 'DRIVER_FRAME' }));
    expect(() => Gt521.Open.decodeResponse(0, Buffer.alloc(3))).toThrow(expect.objectContaining({ code: 'DRIVER_FRAME' }));
  });
});
