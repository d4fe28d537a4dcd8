/**
 * Badge credentials: a card's number is never stored. Enrolment keeps its keyed hash, an
 * HMAC-SHA256 of the credential (`<bits>:<number>`, drivers/badge/formats.ts) under a key derived
 * (HKDF-SHA256, info "edge-agent badge credential v1") from
 *
 * - the site key where the terminal has one: every terminal of the site derives the same key,
 *   so a badge enrolled at one door and shared through site sync opens every door of the site;
 * - the template key otherwise (a terminal on its own).
 *
 * The hash is then sealed in the encrypted template cache like any template (modality `badge`,
 * format `badge-hmac-sha256`). Identification hashes the card read under each key the terminal
 * has (site first) and looks the hashes up: exact match or none, so a badge's score is 1 or it
 * is not found. A badge enrolled before the terminal had a site key stays readable here (its
 * template-key hash is still tried) but means nothing to the other terminals: enrol it again
 * once the site key is set.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { BadgeRead } from '../../drivers/scanner.js';
import { AgentError } from '../core/errors.js';
import type { ModalityMatcher } from '../biometrics/matchers/modality-matcher.js';

export const BADGE_FORMAT = 'badge-hmac-sha256';
const INFO = Buffer.from('edge-agent badge credential v1');

function derive(key: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), INFO, 32));
}

/** Well-formed credentials only: `<24|32>:<number>` (what the readers produce). */
const CREDENTIAL = /^(24|32):\d{1,10}$/;

export class CredentialHasher {
  readonly #keys: Buffer[];

  constructor(keys: { siteKey: Buffer | null; templateKey: Buffer }) {
    this.#keys = [...(keys.siteKey ? [derive(keys.siteKey)] : []), derive(keys.templateKey)];
  }

  /** Whether a badge enrolled here is readable by the site's other terminals. */
  get siteWide(): boolean {
    return this.#keys.length > 1;
  }

  /** The hash enrolment stores: under the site key when there is one. */
  hash(credential: string): Buffer {
    return this.#mac(this.#keys[0]!, credential);
  }

  /** Every hash a stored badge may carry (site key first, then the template key). */
  candidates(credential: string): Buffer[] {
    return this.#keys.map((k) => this.#mac(k, credential));
  }

  #mac(key: Buffer, credential: string): Buffer {
    if (!CREDENTIAL.test(credential))
      throw new AgentError('POLICY_BAD_PUNCH', 'a badge credential is <bits>:<number>', {}, { hint: 'read the badge on a badge reader' });
    return createHmac('sha256', key).update(credential, 'utf8').digest();
  }
}

/** A badge read to identify (what `Identifier.identify` takes for modality badge). */
export interface CredentialProbe {
  credential: string;
}

export function isCredentialProbe(t: unknown): t is CredentialProbe {
  return typeof t === 'object' && t !== null && typeof (t as { credential?: unknown }).credential === 'string';
}

/** The identifier's matcher for badges: the stored hashes in a map, looked up exactly. */
export class BadgeMatcher implements ModalityMatcher {
  readonly modality = 'badge' as const;
  readonly formats = [BADGE_FORMAT] as const;
  readonly #hasher: CredentialHasher;
  /** hex(hash) → template ids (one badge may be enrolled twice by mistake: both are found). */
  readonly #byHash = new Map<string, Set<string>>();
  readonly #hashOf = new Map<string, string>();

  constructor(hasher: CredentialHasher) {
    this.#hasher = hasher;
  }

  get size(): number {
    return this.#hashOf.size;
  }

  add(id: string, data: Uint8Array): void {
    this.remove(id);
    const hex = Buffer.from(data).toString('hex');
    let ids = this.#byHash.get(hex);
    if (!ids) {
      ids = new Set();
      this.#byHash.set(hex, ids);
    }
    ids.add(id);
    this.#hashOf.set(id, hex);
  }

  remove(id: string): void {
    const hex = this.#hashOf.get(id);
    if (hex === undefined) return;
    this.#hashOf.delete(id);
    const ids = this.#byHash.get(hex);
    ids?.delete(id);
    if (ids?.size === 0) this.#byHash.delete(hex);
  }

  async best(template: unknown): Promise<{ id: string; score: number } | null> {
    const credential = isCredentialProbe(template) ? template.credential : null;
    if (credential === null)
      throw new AgentError(
        'BIOMETRICS_TEMPLATE_MALFORMED',
        'a badge is identified by its card read, not by template bytes',
        {},
        { hint: 'pass {credential} from a badge reader' },
      );
    for (const hash of this.#hasher.candidates(credential)) {
      const ids = this.#byHash.get(hash.toString('hex'));
      if (ids && ids.size > 0) return { id: [...ids][0]!, score: 1 };
    }
    return null;
  }

  accepts(score: number): boolean {
    return score >= 1;
  }

  async close(): Promise<void> {
    this.#byHash.clear();
    this.#hashOf.clear();
  }
}

/** The read as the identifier takes it. */
export function credentialProbe(read: BadgeRead): CredentialProbe {
  return { credential: read.credential };
}
