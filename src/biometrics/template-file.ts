/**
 * Template files of any format the agent reads, recognized by their first bytes: the iris code
 * (`EAIR`, iris-code.ts) and fingerprint minutiae records (`FMR\0`: ISO/IEC 19794-2 or ANSI INCITS
 * 378, finger/; the first finger view is the one compared). `describeTemplate` says what a file
 * holds without any biometric data; `compareTemplates` scores two templates of the same modality.
 *
 * Tested in test/integration/template-cli.test.ts (edge-agent template info and compare on every
 * format) and test/unit/fuzz.test.ts (readTemplate on any bytes).
 */
import { AgentError } from '../core/errors.js';
import {
  IRIS_CODE_BITS,
  IRIS_FORMAT,
  IRIS_QUALITY_UNKNOWN,
  decodeIrisTemplate,
  isIrisTemplate,
  validBitCount,
  type IrisCode,
} from './iris/iris-code.js';
import { compareIrisCodes } from './iris/iris-match.js';
import { decodeFingerRecord, decodeFingerTemplate, type FingerRecord } from './finger/iso19794-2.js';
import { compareFingerTemplates } from './finger/matcher.js';
import type { FingerTemplate } from './finger/template.js';

const FMR_MAGIC = [0x46, 0x4d, 0x52, 0x00];

export type LoadedTemplate =
  | { modality: 'iris'; format: typeof IRIS_FORMAT; bytes: number; iris: IrisCode }
  | { modality: 'finger'; format: 'iso19794-2' | 'ansi378'; bytes: number; record: FingerRecord; finger: FingerTemplate };

export interface TemplateThresholds {
  irisThreshold: number;
  irisShiftRange: number;
  fingerThreshold: number;
}

/** Decodes template bytes of any known format; `source` names the file in errors. */
export function readTemplate(bytes: Uint8Array, source: string): LoadedTemplate {
  try {
    if (isIrisTemplate(bytes)) return { modality: 'iris', format: IRIS_FORMAT, bytes: bytes.length, iris: decodeIrisTemplate(bytes) };
    if (bytes.length >= 4 && FMR_MAGIC.every((b, i) => bytes[i] === b)) {
      const record = decodeFingerRecord(bytes);
      if (record.views.length === 0) {
        throw new AgentError(
          'BIOMETRICS_TEMPLATE_MALFORMED',
          'finger minutiae record holds no finger view',
          { offset: 22 },
          { hint: 'export the template again with at least one finger view' },
        );
      }
      return {
        modality: 'finger',
        format: record.format === 'ansi378-2004' ? 'ansi378' : 'iso19794-2',
        bytes: bytes.length,
        record,
        finger: decodeFingerTemplate(bytes),
      };
    }
  } catch (err) {
    if (err instanceof AgentError)
      throw new AgentError(err.code, `${source}: ${err.message}`, { ...err.context, file: source }, { hint: err.hint, cause: err });
    throw err;
  }
  const head = Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
  throw new AgentError(
    'BIOMETRICS_TEMPLATE_UNKNOWN_FORMAT',
    `${source}: not a template format this agent reads (first bytes ${head || 'none: empty file'})`,
    { file: source, offset: 0 },
    {
      hint: `give an ISO/IEC 19794-2 or ANSI INCITS 378 minutiae record (starts with "FMR") or an iris code (${IRIS_FORMAT}, starts with "EAIR")`,
    },
  );
}

/** What a template holds: format, version, counts, quality; never the biometric data itself. */
export function describeTemplate(t: LoadedTemplate): Record<string, unknown> {
  if (t.modality === 'finger') {
    const r = t.record;
    return {
      modality: 'finger',
      format: t.format,
      version: r.format === 'ansi378-2004' ? 'ANSI INCITS 378-2004' : 'ISO/IEC 19794-2:2005',
      bytes: t.bytes,
      width: r.width,
      height: r.height,
      resolutionPpcm: r.resolutionXPpcm,
      views: r.views.length,
      fingerPosition: r.views[0]!.fingerPosition,
      minutiae: r.views.map((v) => v.minutiae.length).join(','),
      quality: r.views.map((v) => v.quality).join(','),
    };
  }
  const valid = validBitCount(t.iris);
  return {
    modality: 'iris',
    format: t.format,
    version: t.iris.version,
    bytes: t.bytes,
    rings: t.iris.rings,
    angles: t.iris.angles,
    codeBits: IRIS_CODE_BITS,
    validBits: valid,
    validFraction: Math.round((valid / IRIS_CODE_BITS) * 1000) / 1000,
    quality: t.iris.quality === IRIS_QUALITY_UNKNOWN ? null : t.iris.quality,
  };
}

export interface TemplateComparison {
  modality: LoadedTemplate['modality'];
  score: number;
  decision: 'accept' | 'reject';
  threshold: number;
  /** How to read the score. */
  scoreKind: string;
  details: Record<string, unknown>;
}

export function compareTemplates(
  a: LoadedTemplate,
  b: LoadedTemplate,
  thresholds: TemplateThresholds,
  names: [string, string] = ['A', 'B'],
): TemplateComparison {
  if (a.modality !== b.modality) {
    throw new AgentError(
      'BIOMETRICS_MODALITY_MISMATCH',
      `${names[0]} is a ${a.modality} template (${a.format}) and ${names[1]} a ${b.modality} template (${b.format}): they cannot be compared`,
      { a: a.format, b: b.format },
      {
        hint: 'compare two finger templates or two iris templates',
      },
    );
  }
  if (a.modality === 'finger' && b.modality === 'finger') {
    const score = compareFingerTemplates(a.finger, b.finger);
    return {
      modality: 'finger',
      score,
      decision: score >= thresholds.fingerThreshold ? 'accept' : 'reject',
      threshold: thresholds.fingerThreshold,
      scoreKind: 'about -10·log10(false match rate), higher is better, accepted at or above the threshold',
      details: { minutiae: [a.finger.minutiae.length, b.finger.minutiae.length] },
    };
  }
  if (a.modality !== 'iris' || b.modality !== 'iris') throw new Error('unreachable: modalities checked above');
  const r = compareIrisCodes(a.iris, b.iris, { shiftRange: thresholds.irisShiftRange });
  return {
    modality: 'iris',
    score: r.hd,
    decision: r.hd <= thresholds.irisThreshold ? 'accept' : 'reject',
    threshold: thresholds.irisThreshold,
    scoreKind: 'normalized Hamming distance, lower is better, accepted at or below the threshold',
    details: { hdRaw: r.hdRaw, bitsCompared: r.bits, shift: r.shift },
  };
}
