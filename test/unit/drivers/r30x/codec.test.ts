import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checksum, encodeCommand, encodeDataPackets, packNibbles, unpackNibbles } from '../../../../drivers/r30x/codec.js';
import { R30xParser } from '../../../../drivers/r30x/parser.js';

function parseAll(chunks: Buffer[]) {
  const parser = new R30xParser();
  return chunks.flatMap((c) => parser.push(c));
}

describe('R30x codec', () => {
  it('encodes the ReadSysPara command exactly as the datasheet shows', () => {
    expect(encodeCommand(0x0f).toString('hex')).toBe('ef01ffffffff0100030f0013');
    expect(encodeCommand(0x01).toString('hex')).toBe('ef01ffffffff01000301' + '0005');
  });

  it('sums packet id, length and payload into the checksum', () => {
    expect(checksum(0x07, Uint8Array.of(0x00))).toBe(0x07 + 0x03);
    expect(checksum(0x02, new Uint8Array(300).fill(0xff))).toBe((0x02 + 0x01 + 0x2e + 300 * 0xff) & 0xffff);
  });

  it('splits data into packets with an end packet last', () => {
    const wire = encodeDataPackets(new Uint8Array(300).fill(7), 128);
    const got = parseAll([wire]);
    expect(got.map((r) => (r.ok ? [r.packet.pid, r.packet.payload.length] : null))).toEqual([
      [2, 128],
      [2, 128],
      [8, 44],
    ]);
  });

  it('packs 8-bit pixels to 4-bit nibbles and back (upper 4 bits kept, ×17 widening)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (px) => {
        const back = unpackNibbles(packNibbles(px), px.length);
        for (let i = 0; i < px.length; i++) expect(back[i]).toBe((px[i]! >> 4) * 17);
      }),
    );
  });
});
