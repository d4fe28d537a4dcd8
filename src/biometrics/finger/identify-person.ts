/**
 * 1:N identification of a person from one or more fingers: every probe is searched through the
 * finger index (prefilter, then the full matcher on its candidates), the compared templates are
 * grouped by person, and the decision (decision.ts) is taken on persons, not on templates.
 *
 * Fusion by person: with one finger a person's score is the best of that person's templates (any
 * finger, any capture; a person's three captures of one finger are one person, so they never
 * compete with each other for first and second place). With two or more fingers, each probe is
 * also compared with every template of the best few persons of the others (so a second finger is
 * scored against the persons the first one found, even where the prefilter would have left them
 * out), and a person's score is the best sum of the probes' scores over distinct finger positions
 * (the same finger presented twice cannot count twice: the second presentation is scored against
 * the person's other fingers), brought back to the scale of one comparison (`fusedToSingle`: the
 * chance tail of a sum of k scores) before the decision.
 *
 * Every probe's scores are first put on the calibrated scale by its own search's candidate list
 * (`cohortNormalizer`, decision.ts): the persons that search ranks 3rd to 20th show how high
 * strangers score for this probe in this gallery, and the probe's scores (those of its search and
 * of the completion step alike) are taken relative to that.
 */
import { cohortNormalizer, decideIdentification, fusedToSingle, type FingerDecision, type FingerDecisionPolicy } from './decision.js';
import type { FingerIndex, IdentifyResult } from './index.js';
import type { FingerTemplate } from './template.js';

/** Whose a stored template is. */
export interface TemplateOwner {
  person: string;
  /** Finger position (e.g. right-index): two probes fused for a person must match different positions. */
  position: string;
}

/** The gallery a person is identified in: the index and who owns its templates. */
export interface PersonGallery {
  readonly index: FingerIndex;
  /** The owner of a template in the index; null leaves it out. */
  ownerOf(templateId: string): TemplateOwner | null;
  /** Every template of a person (used with two or more fingers); without it only the templates each search compared count. */
  templatesOf?(person: string): Iterable<string>;
}

export interface PersonCandidate {
  person: string;
  /** The person's score on the scale of one comparison, after each probe's cohort normalisation (fused over the probes when several). */
  score: number;
  /** Per probe: its best normalised score among this person's templates (0 when none was compared), and that template. */
  probes: Array<{ score: number; templateId: string | null; position: string | null }>;
}

export interface PersonIdentification {
  decision: FingerDecision;
  /** The accepted person; null unless accepted. */
  person: string | null;
  /** The template of the accepted person that the first probe matched best (null unless accepted). */
  templateId: string | null;
  /** The best persons, best first (at most `keep`). */
  candidates: PersonCandidate[];
  /** Best score − second-best person's score (null without candidates). */
  margin: number | null;
  /** The two persons the decision could not tell apart (best and second within the policy's margin), else empty: whom a second finger must separate. */
  between: string[];
  /** The decision's confidence and the confidence needed (decision.ts). */
  confidence: number;
  needed: number;
  /** Templates in the gallery when searched. */
  n: number;
  /** Fingers the decision rests on. */
  probes: number;
}

export interface IdentifyPersonOptions {
  /** Full comparisons per probe after the prefilter (the index's default otherwise). */
  candidates?: number;
  /** Persons returned (default 5). */
  keep?: number;
  /** With two or more fingers: persons of each search whose every template the other probes are compared with (default 5). */
  complete?: number;
  /**
   * Only these persons can be identified (the second-finger step: the persons the first finger left
   * close). Every probe is still searched in the whole gallery, whose candidate list normalises its
   * scores, and compared with every template of these persons (with `templatesOf`).
   */
  among?: readonly string[];
  /** Sees every probe's search (the templates the full matcher compared, best first): benchmarks measure the prefilter with it. */
  onSearch?: (probe: number, compared: readonly IdentifyResult[]) => void;
}

interface Tally {
  person: string;
  /** Per probe: template id → score. */
  seen: Array<Map<string, number>>;
}

/**
 * Identifies the person of one or more fingers (several fingers: one search each, fused by person)
 * and takes the 1:N decision. With the policy's `secondFinger`, one finger that leaves the best
 * person above the floor but not sure enough gives 'ask-second-finger': capture another finger and
 * call again with both.
 */
export function identifyPerson(
  probes: FingerTemplate | readonly FingerTemplate[],
  gallery: PersonGallery,
  policy: FingerDecisionPolicy,
  options: IdentifyPersonOptions = {},
): PersonIdentification {
  const list = Array.isArray(probes) ? (probes as readonly FingerTemplate[]) : [probes as FingerTemplate];
  if (list.length === 0) throw new RangeError('identifyPerson needs at least one probe');
  const keep = Math.max(2, options.keep ?? 5);
  const n = gallery.index.size;
  const among = options.among ? new Set(options.among) : null;
  const tallies = new Map<string, Tally>();
  const normalize: Array<(score: number) => number> = [];
  const tally = (templateId: string, k: number, score: number): void => {
    const owner = gallery.ownerOf(templateId);
    if (!owner || (among && !among.has(owner.person))) return;
    let t = tallies.get(owner.person);
    if (!t) {
      t = { person: owner.person, seen: list.map(() => new Map<string, number>()) };
      tallies.set(owner.person, t);
    }
    t.seen[k]!.set(templateId, normalize[k]!(score));
  };
  const searched = list.map((probe, k) => {
    const found = gallery.index.search(probe, options.candidates === undefined ? {} : { candidates: options.candidates });
    normalize[k] = cohortNormalizer(personScores(found, gallery), n);
    for (const r of found) tally(r.id, k, r.score);
    options.onSearch?.(k, found);
    return found;
  });
  if ((list.length > 1 || among) && gallery.templatesOf) {
    // Each probe against every template of the best persons the other probes found (or of the persons it is limited to).
    const complete = Math.max(1, options.complete ?? 5);
    const persons = new Set<string>(among ?? []);
    for (const found of among ? [] : searched) {
      const seen = new Set<string>();
      for (const r of found) {
        const owner = gallery.ownerOf(r.id);
        if (!owner || seen.has(owner.person)) continue;
        seen.add(owner.person);
        persons.add(owner.person);
        if (seen.size >= complete) break;
      }
    }
    for (const person of persons) {
      const ids = [...gallery.templatesOf(person)];
      list.forEach((probe, k) => {
        const known = tallies.get(person)?.seen[k];
        const missing = known ? ids.filter((id) => !known.has(id)) : ids;
        for (const r of gallery.index.compare(probe, missing)) tally(r.id, k, r.score);
      });
    }
  }
  const ranked = [...tallies.values()].map((t) => fuse(t, gallery)).sort((a, b) => b.score - a.score);
  const first = ranked[0] ?? null;
  const second = ranked[1] ?? null;
  const outcome = decideIdentification({ first: first?.score ?? null, second: second?.score ?? null, n }, policy, list.length);
  const accepted = outcome.decision === 'accept' && first !== null && capturesAgree(ranked, policy);
  return {
    decision: outcome.decision === 'accept' && !accepted ? 'reject' : outcome.decision,
    person: accepted ? first.person : null,
    templateId: accepted ? (first.probes[0]?.templateId ?? first.probes.find((p) => p.templateId)?.templateId ?? null) : null,
    candidates: ranked.slice(0, keep),
    margin: outcome.margin,
    between: outcome.ambiguous && second !== null ? [first!.person, second.person] : [],
    confidence: outcome.confidence,
    needed: outcome.needed,
    n,
    probes: list.length,
  };
}

/**
 * The second-finger step, as the daemon takes it (FingerMatcher.decideAmong) and the benchmark
 * measures it: the first finger and the one asked for, fused by person among `between` only (the
 * persons the first finger's `secondFingerBetween` named), under the policy's second-finger rules
 * (secondFingerShare, secondFingerFloor).
 */
export function identifyAmong(
  probes: readonly FingerTemplate[],
  gallery: PersonGallery,
  between: readonly string[],
  policy: FingerDecisionPolicy,
  options: Omit<IdentifyPersonOptions, 'among'> = {},
): PersonIdentification {
  return identifyPerson(probes, gallery, policy, { ...options, among: between });
}

/** Whom a second finger must separate after 'ask-second-finger': the two close persons, or the best two when the best is not sure enough. */
export function secondFingerBetween(r: PersonIdentification): string[] {
  return r.between.length > 0 ? r.between : r.candidates.slice(0, 2).map((c) => c.person);
}

/**
 * The second-finger rule (policy.secondFingerFloor): every capture after the first, on its own,
 * scores the best person at the floor at least and no other candidate higher. True with one capture
 * or without a floor.
 */
export function capturesAgree(ranked: readonly PersonCandidate[], policy: FingerDecisionPolicy): boolean {
  const floor = policy.secondFingerFloor;
  const best = ranked[0];
  if (floor === undefined || !best) return true;
  for (let k = 1; k < best.probes.length; k++) {
    const own = best.probes[k]!.score;
    if (own < floor || ranked.some((c) => c !== best && c.probes[k]!.score > own)) return false;
  }
  return true;
}

/** One search's persons' best scores, best first (the cohort its normalisation is fitted on). */
function personScores(found: readonly IdentifyResult[], gallery: PersonGallery): number[] {
  const best = new Map<string, number>();
  for (const r of found) {
    const person = gallery.ownerOf(r.id)?.person;
    if (person === undefined) continue;
    if (r.score > (best.get(person) ?? Number.NEGATIVE_INFINITY)) best.set(person, r.score);
  }
  return [...best.values()].sort((a, b) => b - a);
}

/**
 * A person's score: one probe, the best of the person's templates; several, the best sum over an
 * assignment of the probes to distinct finger positions (a probe with no position left adds 0),
 * on the scale of one comparison.
 */
function fuse(t: Tally, gallery: PersonGallery): PersonCandidate {
  type Pick = PersonCandidate['probes'][number];
  const perPosition = t.seen.map((seen) => {
    const m = new Map<string, { score: number; templateId: string }>();
    for (const [id, s] of seen) {
      const pos = gallery.ownerOf(id)?.position ?? id;
      const cur = m.get(pos);
      if (!cur || s > cur.score) m.set(pos, { score: s, templateId: id });
    }
    return m;
  });
  let bestSum = -1;
  let bestPick: Pick[] = [];
  const pick: Pick[] = [];
  const used = new Set<string>();
  const walk = (k: number, sum: number): void => {
    if (k === perPosition.length) {
      if (sum > bestSum) {
        bestSum = sum;
        bestPick = [...pick];
      }
      return;
    }
    let any = false;
    for (const [pos, c] of perPosition[k]!) {
      if (used.has(pos)) continue;
      any = true;
      used.add(pos);
      pick.push({ score: c.score, templateId: c.templateId, position: pos });
      walk(k + 1, sum + c.score);
      pick.pop();
      used.delete(pos);
    }
    if (!any) {
      pick.push({ score: 0, templateId: null, position: null });
      walk(k + 1, sum);
      pick.pop();
    }
  };
  walk(0, 0);
  return { person: t.person, score: fusedToSingle(bestSum, perPosition.length), probes: bestPick };
}
