import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decodeFingerRecord,
  decodeFingerTemplate,
  encodeFingerRecord,
  encodeIso19794_2,
} from '../../../../src/biometrics/finger/iso19794-2.js';
import type { FingerTemplate, Minutia } from '../../../../src/biometrics/finger/template.js';
import { isAgentError } from '../../../../src/core/errors.js';

const UNIT = (2 * Math.PI) / 256;

const minutiaArb = (w: number, h: number): fc.Arbitrary<Minutia> =>
  fc.record({
    x: fc.integer({ min: 0, max: w - 1 }),
    y: fc.integer({ min: 0, max: h - 1 }),
    angle: fc.integer({ min: 0, max: 255 }).map((a) => a * UNIT),
    type: fc.constantFrom('ending' as const, 'bifurcation' as const, 'other' as const),
    quality: fc.integer({ min: 0, max: 100 }),
  });

const templateArb: fc.Arbitrary<FingerTemplate> = fc
  .record({ width: fc.integer({ min: 1, max: 2000 }), height: fc.integer({ min: 1, max: 2000 }) })
  .chain(({ width, height }) =>
    fc.record({
      width: fc.constant(width),
      height: fc.constant(height),
      resolutionPpcm: fc.integer({ min: 1, max: 1000 }),
      quality: fc.integer({ min: 0, max: 100 }),
      fingerPosition: fc.integer({ min: 0, max: 10 }),
      minutiae: fc.array(minutiaArb(width, height), { maxLength: 120 }),
    }),
  );

function expectMalformed(bytes: Uint8Array, offset: number, reason: RegExp): void {
  try {
    decodeFingerRecord(bytes);
  } catch (err) {
    expect(isAgentError(err, 'BIOMETRICS_TEMPLATE_MALFORMED')).toBe(true);
    const e = err as { context: { offset: number; reason: string }; hint?: string };
    expect(e.context.offset).toBe(offset);
    expect(e.context.reason).toMatch(reason);
    expect(e.hint).toBeTruthy();
    return;
  }
  throw new Error('expected the record to be refused');
}

function sample(): FingerTemplate {
  return {
    width: 256,
    height: 288,
    resolutionPpcm: 197,
    quality: 80,
    fingerPosition: 2,
    minutiae: [
      { x: 10, y: 20, angle: 64 * UNIT, type: 'ending', quality: 90 },
      { x: 100, y: 200, angle: 200 * UNIT, type: 'bifurcation', quality: 40 },
    ],
  };
}

describe('ISO/IEC 19794-2:2005 codec', () => {
  it('round-trips any template (property)', () => {
    fc.assert(
      fc.property(templateArb, (t) => {
        const back = decodeFingerTemplate(encodeIso19794_2(t));
        expect(back.width).toBe(t.width);
        expect(back.height).toBe(t.height);
        expect(back.resolutionPpcm).toBe(t.resolutionPpcm);
        expect(back.quality).toBe(t.quality);
        expect(back.fingerPosition).toBe(t.fingerPosition);
        expect(back.minutiae.length).toBe(t.minutiae.length);
        back.minutiae.forEach((m, i) => {
          const o = t.minutiae[i]!;
          expect([m.x, m.y, m.type, m.quality]).toEqual([o.x, o.y, o.type, o.quality]);
          expect(m.angle).toBeCloseTo(o.angle, 9);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('writes the 2005 layout byte for byte', () => {
    const b = encodeIso19794_2(sample());
    expect(Array.from(b.subarray(0, 8))).toEqual([0x46, 0x4d, 0x52, 0, 0x20, 0x32, 0x30, 0]);
    expect(b.length).toBe(24 + 4 + 12 + 2);
    expect(new DataView(b.buffer).getUint32(8)).toBe(b.length);
    expect(Array.from(b.subarray(24, 28))).toEqual([2, 0, 80, 2]);
    // ending (01) at x=10: 0x400a; y=20; angle 64; quality 90
    expect(Array.from(b.subarray(28, 34))).toEqual([0x40, 0x0a, 0x00, 0x14, 64, 90]);
  });

  it('reads several finger views and skips extended data', () => {
    const t = sample();
    const two = encodeFingerRecord({
      width: 256,
      height: 288,
      resolutionXPpcm: 197,
      resolutionYPpcm: 197,
      captureEquipment: 7,
      views: [
        { fingerPosition: 2, viewNumber: 0, impressionType: 0, quality: 80, minutiae: t.minutiae },
        { fingerPosition: 7, viewNumber: 1, impressionType: 2, quality: 60, minutiae: t.minutiae.slice(0, 1) },
      ],
    });
    // Insert 6 bytes of extended data into the first view.
    const ext = [0x00, 0x01, 0x00, 0x06, 0xaa, 0xbb];
    const firstEnd = 24 + 4 + 12;
    const withExt = new Uint8Array(two.length + ext.length);
    withExt.set(two.subarray(0, firstEnd), 0);
    withExt.set([0, ext.length, ...ext], firstEnd);
    withExt.set(two.subarray(firstEnd + 2), firstEnd + 2 + ext.length);
    new DataView(withExt.buffer).setUint32(8, withExt.length);
    const r = decodeFingerRecord(withExt);
    expect(r.format).toBe('iso19794-2:2005');
    expect(r.captureEquipment).toBe(7);
    expect(r.views.map((v) => [v.fingerPosition, v.viewNumber, v.impressionType, v.minutiae.length])).toEqual([
      [2, 0, 0, 2],
      [7, 1, 2, 1],
    ]);
  });

  it('reads ANSI INCITS 378-2004 records (2-degree angles, CBEFF product id)', () => {
    const body = [
      0x46,
      0x4d,
      0x52,
      0,
      0x20,
      0x32,
      0x30,
      0,
      0,
      0, // length, patched below
      0x01,
      0x02,
      0x03,
      0x04, // CBEFF product id
      0,
      0, // equipment
      0x01,
      0x00,
      0x01,
      0x20, // 256 x 288
      0,
      197,
      0,
      197,
      1,
      0, // views, reserved
      3,
      0,
      55,
      1, // position 3, quality 55, 1 minutia
      0x80,
      50,
      0x00,
      60,
      45,
      77, // bifurcation at (50, 60), angle 45*2=90 degrees, quality 77
      0,
      0,
    ];
    const b = Uint8Array.from(body);
    new DataView(b.buffer).setUint16(8, b.length);
    const r = decodeFingerRecord(b);
    expect(r.format).toBe('ansi378-2004');
    const t = decodeFingerTemplate(b);
    expect(t.width).toBe(256);
    expect(t.height).toBe(288);
    expect(t.quality).toBe(55);
    expect(t.minutiae).toHaveLength(1);
    expect(t.minutiae[0]).toMatchObject({ x: 50, y: 60, type: 'bifurcation', quality: 77 });
    expect(t.minutiae[0]!.angle).toBeCloseTo(Math.PI / 2, 9);
  });

  it('reads ANSI records with the 6-byte (extended) length form', () => {
    const b = new Uint8Array(30 + 4 + 6 + 2);
    b.set([0x46, 0x4d, 0x52, 0, 0x20, 0x32, 0x30, 0], 0);
    const dv = new DataView(b.buffer);
    dv.setUint16(8, 0);
    dv.setUint32(10, b.length);
    dv.setUint16(20, 300); // width
    dv.setUint16(22, 400); // height
    dv.setUint16(24, 197);
    dv.setUint16(26, 197);
    b[28] = 1; // one view
    b.set([1, 0, 90, 1], 30);
    b.set([0x40, 10, 0x01, 0x00, 179, 50], 34); // ending at (10, 256), angle 358 degrees
    const r = decodeFingerRecord(b);
    expect(r.format).toBe('ansi378-2004');
    expect(r.width).toBe(300);
    expect(r.views[0]!.minutiae[0]).toMatchObject({ x: 10, y: 256, type: 'ending', quality: 50 });
    expect(r.views[0]!.minutiae[0]!.angle).toBeCloseTo((358 * Math.PI) / 180, 9);
    const badAngle = b.slice();
    badAngle[38] = 180;
    expectMalformed(badAngle, 38, /ANSI angle 180/);
  });

  it('refuses malformed records with the byte offset and the reason', () => {
    const good = encodeIso19794_2(sample());
    expectMalformed(good.subarray(0, 5), 5, /shorter/);
    const badMagic = good.slice();
    badMagic[1] = 0x41;
    expectMalformed(badMagic, 0, /format identifier/);
    const v30 = good.slice();
    v30[5] = 0x33;
    expectMalformed(v30, 4, /version/);
    expectMalformed(good.subarray(0, good.length - 3), 8, /length field/);
    const truncated = good.slice(0, 30);
    new DataView(truncated.buffer).setUint32(8, 30);
    expectMalformed(truncated, 28, /2 minutiae need 12 bytes/);
    const outside = good.slice();
    new DataView(outside.buffer).setUint16(28, 0x4000 | 300);
    expectMalformed(outside, 28, /outside the 256x288 image/);
    const reserved = good.slice();
    reserved[28] = 0xc0;
    expectMalformed(reserved, 28, /type code 3/);
    const badQuality = good.slice();
    badQuality[33] = 101;
    expectMalformed(badQuality, 33, /quality 101/);
    const badExt = good.slice();
    new DataView(badExt.buffer).setUint16(good.length - 2, 50);
    expectMalformed(badExt, good.length - 2, /extended data/);
    const noViews = good.slice();
    noViews[22] = 0;
    expectMalformed(noViews, 22, /no finger views/);
    const trailing = new Uint8Array(good.length + 2);
    trailing.set(good);
    new DataView(trailing.buffer).setUint32(8, trailing.length);
    expectMalformed(trailing, good.length, /trailing bytes/);
  });

  it('refuses random garbage with a typed error, never a crash (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        try {
          decodeFingerRecord(bytes);
        } catch (err) {
          expect(isAgentError(err, 'BIOMETRICS_TEMPLATE_MALFORMED')).toBe(true);
        }
      }),
    );
  });
});
