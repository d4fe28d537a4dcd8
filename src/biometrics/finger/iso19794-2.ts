/**
 * Finger minutiae records: ISO/IEC 19794-2:2005 (read and write) and ANSI INCITS 378-2004 (read).
 *
 * Both start with "FMR\0" and version " 20\0". ISO then has a 4-byte record length, ANSI a 2-byte
 * one (or 0 followed by a 4-byte one) and a 4-byte CBEFF product id; the format is detected by
 * which length field equals the record size. Then (both): capture equipment (2), image size x, y
 * (2+2), resolution x, y in pixels/cm (2+2), number of finger views (1), reserved (1); per view:
 * finger position (1), view number ≪ 4 | impression type (1), finger quality (1), number of
 * minutiae (1), 6 bytes per minutia (type in the top 2 bits of x: 01 ending, 10 bifurcation,
 * 00 other; 14-bit x, 14-bit y; angle byte; quality byte), then a 2-byte extended data length and
 * that many bytes of extended data (skipped: ridge counts, cores and deltas are not used).
 * ISO angles are in units of 360/256°, ANSI angles in units of 2°.
 *
 * A malformed record is refused with BIOMETRICS_TEMPLATE_MALFORMED carrying `context.offset`
 * (the byte offset of the problem) and `context.reason`.
 */
import { AgentError } from '../../core/errors.js';
import { DEFAULT_RESOLUTION_PPCM, normalizeAngle, type FingerTemplate, type Minutia, type MinutiaType } from './template.js';

export type FingerRecordFormat = 'iso19794-2:2005' | 'ansi378-2004';

export interface FingerView {
  fingerPosition: number;
  viewNumber: number;
  impressionType: number;
  quality: number;
  minutiae: Minutia[];
}

export interface FingerRecord {
  format: FingerRecordFormat;
  width: number;
  height: number;
  resolutionXPpcm: number;
  resolutionYPpcm: number;
  captureEquipment: number;
  views: FingerView[];
}

const TWO_PI = 2 * Math.PI;
const ISO_ANGLE_UNIT = TWO_PI / 256;
const ANSI_ANGLE_UNIT = (2 * Math.PI) / 180;

function malformed(offset: number, reason: string): AgentError {
  return new AgentError(
    'BIOMETRICS_TEMPLATE_MALFORMED',
    `finger minutiae record is malformed at byte ${offset}: ${reason}`,
    { offset, reason },
    {
      hint: 'The file is not a valid ISO/IEC 19794-2:2005 or ANSI INCITS 378-2004 minutiae record (truncated or corrupt); re-export or re-enrol the template.',
    },
  );
}

function typeCode(t: MinutiaType): number {
  return t === 'ending' ? 1 : t === 'bifurcation' ? 2 : 0;
}

/** Writes an ISO/IEC 19794-2:2005 record with one or more finger views (no extended data). */
export function encodeFingerRecord(record: Omit<FingerRecord, 'format'>): Uint8Array {
  if (record.views.length > 255)
    throw new AgentError('BIOMETRICS_TEMPLATE_INVALID', 'an ISO record holds at most 255 finger views', { views: record.views.length });
  let size = 24;
  for (const v of record.views) {
    if (v.minutiae.length > 255) {
      throw new AgentError(
        'BIOMETRICS_TEMPLATE_INVALID',
        `a finger view holds at most 255 minutiae, got ${v.minutiae.length}`,
        { minutiae: v.minutiae.length },
        { hint: 'Keep the best 255 minutiae.' },
      );
    }
    size += 4 + 6 * v.minutiae.length + 2;
  }
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x46, 0x4d, 0x52, 0, 0x20, 0x32, 0x30, 0], 0);
  dv.setUint32(8, size);
  dv.setUint16(12, record.captureEquipment & 0xffff);
  dv.setUint16(14, clamp16(record.width));
  dv.setUint16(16, clamp16(record.height));
  dv.setUint16(18, clamp16(record.resolutionXPpcm));
  dv.setUint16(20, clamp16(record.resolutionYPpcm));
  out[22] = record.views.length;
  out[23] = 0;
  let o = 24;
  for (const v of record.views) {
    out[o] = v.fingerPosition & 0xff;
    out[o + 1] = ((v.viewNumber & 0xf) << 4) | (v.impressionType & 0xf);
    out[o + 2] = clampInt(v.quality, 0, 100);
    out[o + 3] = v.minutiae.length;
    o += 4;
    for (const m of v.minutiae) {
      const x = clampInt(m.x, 0, 0x3fff);
      const y = clampInt(m.y, 0, 0x3fff);
      dv.setUint16(o, (typeCode(m.type) << 14) | x);
      dv.setUint16(o + 2, y);
      out[o + 4] = Math.round(normalizeAngle(m.angle) / ISO_ANGLE_UNIT) & 0xff;
      out[o + 5] = clampInt(m.quality, 0, 100);
      o += 6;
    }
    dv.setUint16(o, 0);
    o += 2;
  }
  return out;
}

/** Writes one template as an ISO/IEC 19794-2:2005 record with a single finger view. */
export function encodeIso19794_2(t: FingerTemplate): Uint8Array {
  return encodeFingerRecord({
    width: t.width,
    height: t.height,
    resolutionXPpcm: t.resolutionPpcm,
    resolutionYPpcm: t.resolutionPpcm,
    captureEquipment: 0,
    views: [{ fingerPosition: t.fingerPosition ?? 0, viewNumber: 0, impressionType: 0, quality: t.quality, minutiae: t.minutiae }],
  });
}

function clamp16(v: number): number {
  return clampInt(v, 0, 0xffff);
}

function clampInt(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, Math.round(v)));
}

/** Reads an ISO/IEC 19794-2:2005 or ANSI INCITS 378-2004 finger minutiae record. */
export function decodeFingerRecord(bytes: Uint8Array): FingerRecord {
  const len = bytes.length;
  if (len < 8) throw malformed(len, `record is ${len} bytes, shorter than the 8-byte format identifier and version`);
  if (bytes[0] !== 0x46 || bytes[1] !== 0x4d || bytes[2] !== 0x52 || bytes[3] !== 0)
    throw malformed(0, 'format identifier is not "FMR\\0"');
  if (bytes[4] !== 0x20 || bytes[5] !== 0x32 || bytes[6] !== 0x30 || bytes[7] !== 0) {
    const v = String.fromCharCode(bytes[4]!, bytes[5]!, bytes[6]!);
    throw malformed(4, `version "${v}" is not supported (only " 20": ISO 19794-2:2005 / ANSI 378-2004)`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: FingerRecordFormat;
  let o: number;
  if (len >= 12 && dv.getUint32(8) === len) {
    format = 'iso19794-2:2005';
    o = 12;
  } else if (len >= 10 && dv.getUint16(8) === len && len >= 26) {
    format = 'ansi378-2004';
    o = 14; // 2-byte length + 4-byte CBEFF product identifier
  } else if (len >= 14 && dv.getUint16(8) === 0 && dv.getUint32(10) === len) {
    format = 'ansi378-2004';
    o = 18;
  } else {
    const declared = len >= 12 ? dv.getUint32(8) : len >= 10 ? dv.getUint16(8) : -1;
    throw malformed(
      8,
      `record length field (${declared}) does not match the ${len} bytes given (truncated, or neither ISO nor ANSI layout)`,
    );
  }
  if (len < o + 12) throw malformed(len, `header truncated: needs ${o + 12} bytes, record has ${len}`);
  const captureEquipment = dv.getUint16(o);
  const width = dv.getUint16(o + 2);
  const height = dv.getUint16(o + 4);
  const resolutionXPpcm = dv.getUint16(o + 6);
  const resolutionYPpcm = dv.getUint16(o + 8);
  const nViews = bytes[o + 10]!;
  o += 12;
  if (width === 0 || height === 0) throw malformed(o - 10, `image size ${width}x${height} is empty`);
  if (nViews === 0) throw malformed(o - 2, 'record declares no finger views');
  const unit = format === 'iso19794-2:2005' ? ISO_ANGLE_UNIT : ANSI_ANGLE_UNIT;
  const views: FingerView[] = [];
  for (let v = 0; v < nViews; v++) {
    if (o + 4 > len) throw malformed(o, `finger view ${v + 1} of ${nViews}: header truncated`);
    const fingerPosition = bytes[o]!;
    if (fingerPosition > 10) throw malformed(o, `finger view ${v + 1}: finger position ${fingerPosition} is not 0..10`);
    const viewNumber = bytes[o + 1]! >> 4;
    const impressionType = bytes[o + 1]! & 0xf;
    const quality = bytes[o + 2]!;
    if (quality > 100) throw malformed(o + 2, `finger view ${v + 1}: quality ${quality} is above 100`);
    const count = bytes[o + 3]!;
    o += 4;
    if (o + count * 6 > len) throw malformed(o, `finger view ${v + 1}: ${count} minutiae need ${count * 6} bytes, only ${len - o} remain`);
    const minutiae: Minutia[] = [];
    for (let i = 0; i < count; i++, o += 6) {
      const w0 = dv.getUint16(o);
      const tc = w0 >> 14;
      if (tc === 3) throw malformed(o, `minutia ${i + 1}: type code 3 is reserved`);
      const x = w0 & 0x3fff;
      const y = dv.getUint16(o + 2) & 0x3fff;
      const a = bytes[o + 4]!;
      if (format === 'ansi378-2004' && a >= 180) throw malformed(o + 4, `minutia ${i + 1}: ANSI angle ${a} is not 0..179`);
      const q = bytes[o + 5]!;
      if (q > 100) throw malformed(o + 5, `minutia ${i + 1}: quality ${q} is above 100`);
      if (x >= width || y >= height)
        throw malformed(o, `minutia ${i + 1}: position (${x}, ${y}) lies outside the ${width}x${height} image`);
      minutiae.push({ x, y, angle: normalizeAngle(a * unit), type: tc === 1 ? 'ending' : tc === 2 ? 'bifurcation' : 'other', quality: q });
    }
    if (o + 2 > len) throw malformed(o, `finger view ${v + 1}: extended data length truncated`);
    const ext = dv.getUint16(o);
    o += 2;
    if (o + ext > len) throw malformed(o - 2, `finger view ${v + 1}: extended data of ${ext} bytes runs past the end of the record`);
    o += ext; // extended data (ridge counts, core/delta, vendor blocks) is skipped
    views.push({ fingerPosition, viewNumber, impressionType, quality, minutiae });
  }
  if (o !== len) throw malformed(o, `${len - o} trailing bytes after the last finger view`);
  return { format, width, height, resolutionXPpcm, resolutionYPpcm: resolutionYPpcm || resolutionXPpcm, captureEquipment, views };
}

/** The first finger view of an ISO or ANSI record as a template. */
export function decodeFingerTemplate(bytes: Uint8Array): FingerTemplate {
  const r = decodeFingerRecord(bytes);
  const v = r.views[0]!;
  return {
    width: r.width,
    height: r.height,
    resolutionPpcm: r.resolutionXPpcm || DEFAULT_RESOLUTION_PPCM,
    quality: v.quality,
    minutiae: v.minutiae,
    fingerPosition: v.fingerPosition,
  };
}
