// Each R30x command's codec, the one both the driver and the simulator use: requests and
// responses survive the trip, the bytes are the manual's, and short answers are named errors.
import { describe, expect, it } from 'vitest';
import { R30X_COMMANDS, R30x, type R30xCommand } from '../../../../drivers/r30x/commands.js';
import { Instruction } from '../../../../drivers/r30x/protocol.js';

const samples: { [K in keyof typeof R30x]: (typeof R30x)[K] extends R30xCommand<infer Req, infer Res> ? [Req, Res] : never } = {
  VfyPwd: [{ password: 0xdeadbeef }, {}],
  ReadSysPara: [{}, { status: 0x0c, systemId: 9, capacity: 200, securityLevel: 3, address: 0xffffffff, packetSize: 64, baud: 57600 }],
  ReadProdInfo: [
    {},
    {
      model: 'R503',
      batch: 'B1',
      serial: 'SN000042',
      hardwareVersion: '1.2',
      sensor: 'FPC1021',
      sensorWidth: 192,
      sensorHeight: 192,
      templateSize: 512,
      capacity: 200,
    },
  ],
  WriteReg: [{ register: 6, value: 2 }, {}],
  GenImg: [{}, {}],
  Img2Tz: [{ buffer: 2 }, {}],
  RegModel: [{}, {}],
  Store: [{ buffer: 1, slot: 777 }, {}],
  LoadChar: [{ buffer: 2, slot: 65535 }, {}],
  UpChar: [{ buffer: 1 }, {}],
  DownChar: [{ buffer: 2 }, {}],
  UpImage: [{}, {}],
  Search: [
    { buffer: 1, start: 0, count: 1000 },
    { slot: 999, score: 180 },
  ],
  HiSpeedSearch: [
    { buffer: 2, start: 256, count: 44 },
    { slot: 300, score: 61 },
  ],
  Match: [{}, { score: 123 }],
  DeletChar: [{ slot: 10, count: 5 }, {}],
  Empty: [{}, {}],
  TemplateNum: [{}, { count: 1234 }],
  ReadIndexTable: [{ page: 1 }, { slots: [256, 263, 300, 511] }],
  AuraLedConfig: [{ control: 2, speed: 40, color: 4, count: 3 }, {}],
};

describe('R30x command codecs', () => {
  it('carry every request and response through their bytes and back', () => {
    for (const [name, [req, res]] of Object.entries(samples) as Array<[keyof typeof R30x, [never, never]]>) {
      const cmd = R30x[name] as R30xCommand<unknown, unknown>;
      expect(cmd.instruction, name).toBe(Instruction[name]);
      expect(R30X_COMMANDS.get(cmd.instruction)).toBe(cmd);
      const reqBytes = Buffer.from(cmd.encodeRequest(req));
      expect(cmd.decodeRequest(reqBytes), name).toEqual(req);
      expect(cmd.decodeResponse(Buffer.from(cmd.encodeResponse(res, req)), req), name).toEqual(res);
    }
  });

  it('lay the bytes out as the manual says', () => {
    expect(Buffer.from(R30x.Search.encodeRequest({ buffer: 1, start: 0, count: 0x00a3 })).toString('hex')).toBe('01000000a3');
    expect(Buffer.from(R30x.VfyPwd.encodeRequest({ password: 0 })).toString('hex')).toBe('00000000');
    const sys = Buffer.from(
      R30x.ReadSysPara.encodeResponse(
        { status: 0, systemId: 9, capacity: 200, securityLevel: 3, address: 0xffffffff, packetSize: 128, baud: 57600 },
        {},
      ),
    );
    expect(sys.toString('hex')).toBe('0000' + '0009' + '00c8' + '0003' + 'ffffffff' + '0002' + '0006');
    expect(
      Buffer.from(R30x.ReadIndexTable.encodeResponse({ slots: [0, 9, 255, 256] }, { page: 0 }))
        .subarray(0, 2)
        .toString('hex'),
    ).toBe('0102');
    expect(R30x.ReadProdInfo.encodeResponse(samples.ReadProdInfo[1], {}).length).toBe(46);
  });

  it('say a request is too short (the module answers 0x01) and an answer too short is DRIVER_PROTOCOL', () => {
    expect(R30x.Store.decodeRequest(Buffer.of(1, 0))).toBeNull();
    expect(R30x.Search.decodeRequest(Buffer.of(1, 0, 0, 0))).toBeNull();
    expect(R30x.VfyPwd.decodeRequest(Buffer.of(0, 0, 0))).toBeNull();
    expect(R30x.ReadIndexTable.decodeRequest(Buffer.alloc(0))).toEqual({ page: 0 });
    expect(() => R30x.ReadSysPara.decodeResponse(Buffer.alloc(15), {})).toThrow(expect.objectContaining({ code: 'DRIVER_PROTOCOL' }));
    expect(() => R30x.Search.decodeResponse(Buffer.alloc(3), { buffer: 1, start: 0, count: 1 })).toThrow(/short search answer/);
    expect(() => R30x.TemplateNum.decodeResponse(Buffer.alloc(1), {})).toThrow(expect.objectContaining({ code: 'DRIVER_PROTOCOL' }));
    expect(R30x.Match.decodeResponse(Buffer.alloc(0), {})).toEqual({ score: 0 });
  });
});
