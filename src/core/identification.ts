/**
 * Who a capture, a badge read or a template is: the one answer of identification, from the
 * identifier's 1:N match (src/terminal/identifier.ts) through the recognizer
 * (src/terminal/recognizer.ts) to the scanner worker and on-demand identification.
 *
 * The types, tested in test/unit/terminal/identifier.test.ts and test/unit/terminal/recognizer.test.ts
 * (the answers that carry it); and how a score reads to a person (`scoreText`, `scoreLabel`), the
 * one wording of the CLI, the demo and the enrolment's messages, tested in
 * test/unit/core/identification.test.ts.
 */
import type { TemplateModality } from './modality.js';

export type Decision = 'accept' | 'reject';

export interface Identification {
  /** The person, when accepted; null on a reject. */
  employeeCode: string | null;
  /** What was matched: the scanner's modality (an embedding hit counts as the finger or eye it read), or the index's. */
  modality: TemplateModality;
  /**
   * The best candidate's score in the matcher's own scale (null when there was none): for irises
   * the normalized Hamming distance (lower is better), for fingers ≈ −10·log10 FMR (higher is
   * better), a module's own search score on the module path.
   */
  score: number | null;
  decision: Decision;
  /** Where: the module's own search (serial fingerprint modules), or host 1:N matching. */
  path: 'module' | 'host';
  /** The matched template in the host's index, when accepted there; null otherwise. */
  templateId: string | null;
  /** Time spent matching, in milliseconds. */
  ms: number;
  /**
   * On a reject: the persons this capture could not tell apart (two close, or the best not sure
   * enough) when the policy asks for a second finger (policy.secondFinger); absent otherwise.
   */
  between?: string[];
  /**
   * The score the decision needed, where it moves with the gallery's size: for irises the largest
   * distance accepted with this many templates enrolled (iris-decision.ts); absent otherwise.
   */
  needed?: number;
}

/**
 * A score for a person: a finger score as a whole number (301), an iris distance with two
 * decimals (0.18). JSON output keeps the exact figure.
 */
export function scoreText(score: number | null | undefined, modality: string): string {
  if (score === null || score === undefined || !Number.isFinite(score)) return 'n/a';
  return modality === 'iris' ? score.toFixed(2) : String(Math.round(score));
}

/** "distance 0.18" for an eye (lower is closer), "score 302" for a finger (higher is closer). */
export function scoreLabel(score: number | null | undefined, modality: string): string {
  return `${modality === 'iris' ? 'distance' : 'score'} ${scoreText(score, modality)}`;
}
