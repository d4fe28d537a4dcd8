/**
 * In-memory engines and punch policy for the terminal's unit tests. An image's first pixel is the
 * finger (or eye) it shows, and its "template" is that one byte; the gallery says whose it is. A
 * badge's credential, an embedding's first byte and a module slot are looked up the same way.
 */
import { randomBytes } from 'node:crypto';
import type { Identification } from '../../../src/core/identification.js';
import type { TemplateModality } from '../../../src/core/modality.js';
import { CredentialHasher } from '../../../src/terminal/credentials.js';
import type { Embedder } from '../../../src/terminal/engines.js';
import type { IdentifyRequest } from '../../../src/terminal/identifier.js';
import type { Presentation, PresentResult } from '../../../src/terminal/punch-policy.js';
import type { RecognitionEngines } from '../../../src/terminal/recognizer.js';

export interface FakeEngineOptions {
  /** Finger or eye number (an image's first pixel) → employee code. */
  gallery?: Record<number, string>;
  /** Module slot → employee code. */
  slots?: Record<number, string>;
  /** Badge credential → employee code (badges are identified only when given). */
  badges?: Record<string, string>;
  /** The embedding slot: which modality it reads, and embedding (the image's first pixel) → employee code. */
  embedding?: { source: 'finger' | 'iris'; gallery: Record<number, string> };
  /** No extractor (the models did not load). */
  noExtractor?: boolean;
  /** What every answer says the decision needed (as the iris matcher's, which moves with the gallery's size). */
  needed?: number;
}

export interface FakeEngines extends RecognitionEngines {
  /** Every request the identifier answered, in order. */
  readonly requests: IdentifyRequest[];
}

const SCORE_ACCEPT = 55;
const SCORE_REJECT = 3;

function answer(modality: TemplateModality, code: string | null, needed?: number): Identification {
  return {
    ...(needed !== undefined ? { needed } : {}),
    employeeCode: code,
    modality,
    score: code ? SCORE_ACCEPT : SCORE_REJECT,
    decision: code ? 'accept' : 'reject',
    path: 'host',
    templateId: code ? `t-${modality}-${code}` : null,
    ms: 0,
  };
}

export function fakeEngines(o: FakeEngineOptions): FakeEngines {
  const requests: IdentifyRequest[] = [];
  const lookup = (r: IdentifyRequest): string | null => {
    if (r.modality === 'badge') return o.badges?.[(r.template as { credential: string }).credential] ?? null;
    const key = (r.template as Uint8Array)[0]!;
    return (r.modality === 'embedding' ? o.embedding?.gallery[key] : o.gallery?.[key]) ?? null;
  };
  const embedder: Embedder | null = o.embedding
    ? { source: o.embedding.source, embed: async (image) => Uint8Array.of(image.pixels[0] ?? 0) }
    : null;
  return {
    requests,
    identifier: {
      size: (m) => (m === 'embedding' ? Object.keys(o.embedding?.gallery ?? {}).length : Object.keys(o.gallery ?? {}).length),
      identify: async (r) => {
        requests.push(r);
        return answer(r.modality, lookup(r), o.needed);
      },
    },
    extractor: o.noExtractor
      ? null
      : {
          extract: async (_modality, image) => ({ format: 'iso19794-2', data: Uint8Array.of(image.pixels[0] ?? 0), quality: 90 }),
          close: async () => undefined,
        },
    embedder,
    slots: { owner: async (_key, slot) => o.slots?.[slot] ?? null },
    credentials: o.badges ? new CredentialHasher({ siteKey: null, templateKey: randomBytes(32) }) : null,
  };
}

/** A punch recorded as a check-in (what the policy answers when it records). */
export function punchedIn(): PresentResult {
  return {
    recorded: true,
    id: 'p-1',
    direction: 'in',
    localTime: '2026-03-02 07:58:00',
    tzOffset: 0,
    clockTrusted: true,
    timeSource: 'clock',
  };
}

/** A policy that records every presentation and answers `answer` (by default: punched in). */
export function fakePolicy(answerFor: (p: Presentation) => PresentResult = () => punchedIn()) {
  const presented: Presentation[] = [];
  /** The employee codes presented, in order. */
  const punches: string[] = [];
  return {
    presented,
    punches,
    present: async (p: Presentation): Promise<PresentResult> => {
      presented.push(p);
      punches.push(p.employeeCode);
      return answerFor(p);
    },
  };
}
