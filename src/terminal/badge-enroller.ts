/**
 * Badge enrolment: a person who cannot enrol a finger or an eye (or a site that wants cards) is
 * given a badge. `enroll` (enroller.ts) checks the person with the attendance service, then hands
 * over here:
 *
 *  1. one card read on any of the terminal's badge readers, all of them taken from the capture
 *     loop for the while and named in the prompt (a card already on a reader is that read; a
 *     failed read is asked again, up to three);
 *  2. a badge already enrolled to someone else is refused (`ENROLL_DUPLICATE`);
 *  3. its keyed hash (credentials.ts; never the number) replaces this person's earlier badge of
 *     the same position ("badge" unless told, so a person may hold a second card) in the
 *     encrypted template cache;
 *  4. it is published to the site with the person's record (site sync), so every terminal of the
 *     site knows the badge. It is not uploaded: the attendance service's biometric items are
 *     face, finger and iris.
 *
 * Tested in test/integration/agent-badge-e2e.test.ts (a badge enrolled through the running agent
 * and in-process, punched once, a second read adding nothing, an unknown badge refused).
 */
import type { BadgeRead, Scanner } from '../../drivers/scanner.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';
import type { TemplateCache } from '../store/template-cache.js';
import { BADGE_FORMAT, type CredentialHasher } from './credentials.js';
import type { Identifier } from './identifier.js';
import type { ScannerSession } from './scanner-worker.js';

const log = logger('agent:enroll');

/** Failed card reads (checksum, format) asked again before enrolment gives up. */
const READ_ATTEMPTS = 3;

export interface BadgeEnrollTerminal {
  readonly config: { terminal: { id: string; site: string } };
  readonly cache: TemplateCache | null;
  readonly identifier: Identifier | null;
  readonly credentials?: CredentialHasher | null;
  publishPerson(employeeCode: string): Promise<boolean>;
}

/** A badge reader's worker, lent by the capture loop for the read. */
export interface BadgeReaderWorker {
  readonly key: string;
  readonly modality: string | null;
  readonly status: string;
  assertNotHeldElsewhere(): void;
  withScanner<T>(fn: ScannerSession<T>): Promise<T>;
  reserve(): () => void;
}

/**
 * The badge readers a badge enrolment or identification listens on: the one named (`key`), else
 * every badge reader of the terminal that is ready (the first one when none is, which then says
 * why it is not).
 */
export function badgeReaders(rt: { readonly workers: ReadonlyMap<string, BadgeReaderWorker> }, key?: string): BadgeReaderWorker[] {
  const all = [...rt.workers.values()];
  const readers = key ? all.filter((w) => w.key === key) : all.filter((w) => w.modality === 'badge');
  if (readers.length === 0) {
    throw new AgentError(
      'AGENT_NO_SCANNER',
      key ? `no scanner "${key}" on this terminal` : 'no badge scanner on this terminal',
      { modality: 'badge', key: key ?? null },
      {
        hint: `scanners here: ${all.map((w) => w.key).join(', ') || 'none'}; configure one with --scanner family:path or in the config`,
      },
    );
  }
  const ready = readers.filter((w) => w.status === 'ready');
  const chosen = ready.length > 0 ? ready : [readers[0]!];
  for (const w of chosen) w.assertNotHeldElsewhere();
  return chosen;
}

/** A reader taken for the session: its key, the scanner, and a card read the capture loop handed over. */
interface TakenReader {
  key: string;
  scanner: Scanner;
  handed: BadgeRead | null;
}

/** Takes every reader from its capture loop (one after the other), runs `fn` with them all, gives them back. */
function withReaders<T>(workers: BadgeReaderWorker[], fn: (taken: TakenReader[]) => Promise<T>): Promise<T> {
  const take = (i: number, taken: TakenReader[]): Promise<T> =>
    i === workers.length
      ? fn(taken)
      : workers[i]!.withScanner((scanner, handed) =>
          take(i + 1, [...taken, { key: workers[i]!.key, scanner, handed: handed?.badge ?? null }]),
        );
  return take(0, []);
}

/** What the person is told: which readers listen. */
function listening(taken: TakenReader[]): string {
  return taken.length === 1
    ? `hold the badge to the reader (listening on badge reader ${taken[0]!.key})`
    : `hold the badge to one of the readers (listening on badge readers ${taken.map((t) => t.key).join(', ')})`;
}

export interface BadgeEnrollRequest {
  employeeCode: string;
  /** The person's name from the service (null when not checked). */
  name: string | null;
  position: string;
  timeoutMs: number;
}

export interface BadgeEnrollResult {
  employeeCode: string;
  name: string | null;
  modality: 'badge';
  position: string;
  templates: Array<{ id: string; format: string; quality: number | null }>;
  upload: null;
  uploadError: null;
  publishedToSite: boolean;
}

/** Slice of a wait on one reader while several are listened to in turn. */
const LISTEN_SLICE_MS = 100;

/**
 * The first card read on any of the readers: one the capture loop handed over, else the next
 * that comes within `timeoutMs`. A failed read is asked again (up to READ_ATTEMPTS in all).
 */
async function readBadge(
  taken: TakenReader[],
  timeoutMs: number,
  progress: (e: Record<string, unknown>) => void,
  signal?: AbortSignal,
): Promise<{ read: BadgeRead; reader: TakenReader }> {
  for (const t of taken) {
    if (!t.scanner.capabilities.credential || !t.scanner.readCredential) {
      throw new AgentError(
        'AGENT_NO_SCANNER',
        `scanner ${t.key} reads no badges`,
        { family: t.scanner.family },
        { hint: 'configure a badge reader (--scanner badge-serial:/dev/ttyUSB0 or badge-hid:/dev/hidraw0)' },
      );
    }
  }
  const handed = taken.find((t) => t.handed);
  if (handed) return { read: handed.handed!, reader: handed };
  const deadline = monotonicMs() + timeoutMs;
  const slice = taken.length === 1 ? timeoutMs : LISTEN_SLICE_MS;
  for (let attempt = 1; ; ) {
    let ready: TakenReader | undefined;
    while (!ready && monotonicMs() < deadline) {
      signal?.throwIfAborted();
      for (const t of taken) {
        const ms = Math.max(1, Math.min(slice, deadline - monotonicMs()));
        if (await t.scanner.waitForPresence({ timeoutMs: ms, ...(signal ? { signal } : {}) })) {
          ready = t;
          break;
        }
      }
    }
    signal?.throwIfAborted();
    if (!ready) {
      throw new AgentError(
        'ENROLL_TIMEOUT',
        `no badge read within ${Math.round(timeoutMs / 1000)} s on ${taken.length === 1 ? `badge reader ${taken[0]!.key}` : `badge readers ${taken.map((t) => t.key).join(', ')}`}`,
        { modality: 'badge', readers: taken.map((t) => t.key) },
        {
          hint: 'a reader reads a card once as it comes into its field: take the card away from the reader, show it again when asked, then run the command again',
          retryable: true,
        },
      );
    }
    try {
      return { read: await ready.scanner.readCredential!(), reader: ready };
    } catch (err) {
      const e = toAgentError(err);
      if (/TRANSPORT|DISCONNECT/.test(e.code) || attempt >= READ_ATTEMPTS) throw e;
      attempt++;
      progress({ step: 'retry', message: `the card read failed (${e.code}: ${e.message}); hold it to the reader again` });
      await ready.scanner.feedback('try-again').catch(() => undefined);
    }
  }
}

export async function enrollBadge(
  rt: BadgeEnrollTerminal,
  req: BadgeEnrollRequest,
  progress: (e: Record<string, unknown>) => void,
  readers: BadgeReaderWorker[],
  signal?: AbortSignal,
): Promise<BadgeEnrollResult> {
  const { employeeCode, position } = req;
  if (!rt.cache || !rt.identifier || !rt.credentials)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );
  const cache = rt.cache;
  const identifier = rt.identifier;
  const credentials = rt.credentials;
  if (position.length === 0 || position.length > 32)
    throw new AgentError('CLI_USAGE', 'a badge position is a label of 1 to 32 characters (default "badge")', { position });

  const { read, model } = await withReaders(readers, async (taken) => {
    progress({ step: 'capture', capture: 1, of: 1, readers: taken.map((t) => t.key), message: listening(taken) });
    const { read, reader } = await readBadge(taken, req.timeoutMs, progress, signal);
    const scanner = reader.scanner;
    const model = (await scanner.info()).model;
    const dup = await identifier.identify({ modality: 'badge', template: { credential: read.credential } });
    if (dup.decision === 'accept' && dup.employeeCode && dup.employeeCode !== employeeCode) {
      await scanner.feedback('error').catch(() => undefined);
      throw new AgentError(
        'ENROLL_DUPLICATE',
        `this badge is already enrolled to employee ${dup.employeeCode}`,
        { employeeCode, other: dup.employeeCode },
        { hint: 'a badge belongs to one person: take another card, or delete the other enrolment first' },
      );
    }
    await scanner.feedback('accepted').catch(() => undefined);
    return { read, model };
  });
  progress({ step: 'badge-read', message: 'badge read' });

  const version = Date.now();
  const createdAt = new Date(version).toISOString();
  for (const old of await cache.listTemplateMeta({ employeeCode, modality: 'badge' })) {
    if (old.position === position) await cache.removeTemplate(old.id);
  }
  if (req.name) await cache.upsertUser({ employeeCode, displayName: req.name });
  const stored = await cache.addTemplates([
    {
      employeeCode,
      modality: 'badge',
      position,
      format: BADGE_FORMAT,
      data: credentials.hash(read.credential),
      sensorModel: model,
      createdAt,
      sourceTerminal: rt.config.terminal.id,
      version,
    },
  ]);
  progress({ step: 'stored', templates: stored.length });
  log.info({ employeeCode, modality: 'badge', position, siteWide: credentials.siteWide }, 'badge enrolled');
  progress({
    step: 'no-upload',
    message:
      'a badge is not sent to the attendance service (its biometric items are face, finger and iris): it stays with the terminals of the site',
  });

  const publishedToSite = await rt.publishPerson(employeeCode);
  if (publishedToSite) progress({ step: 'site', message: `published to site ${rt.config.terminal.site}` });
  else if (!credentials.siteWide) progress({ step: 'site', message: 'no site key: this badge opens this terminal only' });
  return {
    employeeCode,
    name: req.name,
    modality: 'badge',
    position,
    templates: stored.map((s) => ({ id: s.id, format: s.format, quality: s.quality })),
    upload: null,
    uploadError: null,
    publishedToSite,
  };
}

export interface BadgeIdentifyResult {
  employeeCode: string | null;
  name: string | null;
  modality: 'badge';
  score: number | null;
  decision: 'accept' | 'reject';
  ms: number;
}

/** One card read, looked up among the enrolled badges, nothing punched (`edge-agent identify --modality badge`). */
export async function identifyBadgeOnce(
  rt: BadgeEnrollTerminal,
  readers: BadgeReaderWorker[],
  progress: (e: Record<string, unknown>) => void,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<BadgeIdentifyResult> {
  if (!rt.identifier || !rt.cache)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );
  const identifier = rt.identifier;
  const cache = rt.cache;
  return withReaders(readers, async (taken) => {
    progress({ step: 'capture', readers: taken.map((t) => t.key), message: listening(taken) });
    const t0 = performance.now();
    const { read } = await readBadge(taken, timeoutMs, progress, signal);
    const r = await identifier.identify({ modality: 'badge', template: { credential: read.credential } });
    const user = r.employeeCode ? await cache.getUser(r.employeeCode) : null;
    return {
      employeeCode: r.employeeCode,
      name: user?.displayName ?? null,
      modality: 'badge',
      score: r.score,
      decision: r.decision,
      ms: Math.round(performance.now() - t0),
    };
  });
}
