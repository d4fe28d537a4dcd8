/**
 * The recognizer: what a scanner holds, turned into one Identification. The scanner worker calls
 * it once a finger, an eye or a card is there; it asks the scanner for what it can give and
 * answers who that is:
 *
 * - a card reader: the badge read, looked up by its keyed hash among the enrolled badges
 *   (credentials.ts, through the identifier's badge matcher);
 * - a module that keeps templates (serial fingerprint modules): the module's own search first; a
 *   hit whose slot maps to a person is the answer (path `module`);
 * - otherwise, or on a miss: the image, on the host. Where the embedding slot reads this
 *   modality's images, the embedding answers first and the standard template covers a reject;
 *   else extraction (ISO 19794-2 minutiae, iris code) and 1:N against the identifier's index.
 *
 * Nothing is punched here (punch-step.ts does that). The engines are read at each capture: they
 * come and go with the daemon's biometrics component, and are absent on a terminal without a
 * template key or models (a reject then, so the person is told "unknown").
 */
import type { BadgeRead, CapturedImage, ModuleSearchResult, Scanner } from '../../drivers/scanner.js';
import type { Identification } from '../core/identification.js';
import type { BiometricModality, ScannerModality } from '../core/modality.js';
import { AgentError } from '../core/errors.js';
import { monotonicMs } from '../core/time.js';
import type { ModuleSlots } from '../store/module-slots.js';
import type { CredentialHasher } from './credentials.js';
import type { Embedder, Extractor } from './engines.js';
import type { Identifier } from './identifier.js';

/** The parts of a running terminal recognition uses (the daemon's runtime has them). */
export interface RecognitionEngines {
  readonly identifier: (Pick<Identifier, 'identify' | 'size'> & Partial<Pick<Identifier, 'identifyAmong'>>) | null;
  readonly extractor: Extractor | null;
  readonly embedder: Embedder | null;
  readonly slots: Pick<ModuleSlots, 'owner'> | null;
  /** Badge credentials' keyed hashes: without them badges are not identified here. */
  readonly credentials?: CredentialHasher | null;
}

export interface RecognizerOptions {
  /** Minimum module score counted as a match on the module path (default 0: the module's own threshold). */
  moduleMinScore?: number;
}

/** An identification with the template it was made from (host matching of an image), for a second-finger step. */
export type Recognition = Identification & { probe?: Uint8Array };

/** The scanner as the recognizer asks it. */
export type RecognizedScanner = Pick<Scanner, 'modality' | 'capabilities' | 'captureImage' | 'searchOnModule' | 'readCredential'>;

function reject(modality: ScannerModality): Identification {
  return { employeeCode: null, modality, score: null, decision: 'reject', path: 'host', templateId: null, ms: 0 };
}

export class Recognizer {
  readonly #engines: RecognitionEngines;
  readonly #moduleMinScore: number;

  constructor(engines: RecognitionEngines, options: RecognizerOptions = {}) {
    this.#engines = engines;
    this.#moduleMinScore = options.moduleMinScore ?? 0;
  }

  /**
   * Who is at `scanner` now: the card, the module's search, or the image, as above. Null when the
   * scanner has nothing to give (neither card, module nor image). Capture errors are thrown.
   */
  async recognize(scanner: RecognizedScanner, scannerKey: string): Promise<Recognition | null> {
    if (scanner.capabilities.credential && scanner.readCredential) return this.badge(await scanner.readCredential());
    if (scanner.capabilities.moduleSearch) {
      const t0 = monotonicMs();
      const hit = await scanner.searchOnModule();
      const found = hit ? await this.moduleHit(scannerKey, scanner.modality, hit, monotonicMs() - t0) : null;
      if (found) return found;
    }
    if (scanner.capabilities.image && scanner.modality !== 'badge') return this.image(scanner.modality, await scanner.captureImage());
    return null;
  }

  /** A badge read against the enrolled badges (their keyed hashes); a reject when badges are not identified here. */
  async badge(read: BadgeRead): Promise<Identification> {
    const { identifier, credentials } = this.#engines;
    if (!identifier || !credentials) return reject('badge');
    return identifier.identify({ modality: 'badge', template: { credential: read.credential } });
  }

  /** A module's search hit: the person its slot holds, or null (a low score, a slot the agent does not know). */
  async moduleHit(scannerKey: string, modality: ScannerModality, hit: ModuleSearchResult, ms: number): Promise<Identification | null> {
    if (hit.score < this.#moduleMinScore || !this.#engines.slots) return null;
    const code = await this.#engines.slots.owner(scannerKey, hit.slot);
    return code ? { employeeCode: code, modality, score: hit.score, decision: 'accept', path: 'module', templateId: null, ms } : null;
  }

  /** Host matching from an image: the embedding slot first where it reads this modality, then extraction and 1:N. */
  async image(modality: BiometricModality, image: CapturedImage): Promise<Recognition> {
    const { identifier, extractor, embedder } = this.#engines;
    if (embedder && identifier && embedder.source === modality && identifier.size('embedding') > 0) {
      const r = await identifier.identify({ modality: 'embedding', template: await embedder.embed(image) });
      if (r.decision === 'accept') return { ...r, modality };
    }
    if (!extractor || !identifier) return reject(modality);
    const { data } = await extractor.extract(modality, image);
    return { ...(await identifier.identify({ modality, template: data })), modality, probe: data };
  }

  /** A second capture's template (the second-finger step); throws when extraction is not available. */
  async template(modality: BiometricModality, image: CapturedImage): Promise<Uint8Array> {
    const { extractor } = this.#engines;
    if (!extractor)
      throw new AgentError(
        'AGENT_NO_EXTRACTOR',
        'image extraction is not available on this terminal',
        { modality },
        {
          hint: 'run "edge-agent doctor": the extraction models failed to load',
        },
      );
    return (await extractor.extract(modality, image)).data;
  }

  /** Several captures decided together among `among` (Identifier.identifyAmong); a reject where the identifier cannot. */
  async among(modality: BiometricModality, templates: readonly Uint8Array[], among: readonly string[]): Promise<Identification> {
    const { identifier } = this.#engines;
    if (!identifier?.identifyAmong) return reject(modality);
    return identifier.identifyAmong({ modality, templates, among });
  }
}
