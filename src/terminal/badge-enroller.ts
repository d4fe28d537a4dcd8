/**
 * Badge enrolment: a person who cannot enrol a finger or an eye (or a site that wants cards) is
 * given a badge. `enroll` (enroller.ts) checks the person with the attendance service, then hands
 * over here:
 *
 *  1. one card read on the terminal's badge reader (a failed read is asked again, up to three);
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
import type { TemplateCache } from '../store/template-cache.js';
import { BADGE_FORMAT, type CredentialHasher } from './credentials.js';
import type { Identifier } from './identifier.js';

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

/** The badge reader's worker, lent by the capture loop for the read. */
export interface BadgeReaderWorker {
  readonly key: string;
  withScanner<T>(fn: (scanner: Scanner) => Promise<T>): Promise<T>;
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

async function readBadge(scanner: Scanner, timeoutMs: number, progress: (e: Record<string, unknown>) => void): Promise<BadgeRead> {
  if (!scanner.capabilities.credential || !scanner.readCredential) {
    throw new AgentError(
      'AGENT_NO_SCANNER',
      `scanner ${scanner.family} reads no badges`,
      { family: scanner.family },
      { hint: 'configure a badge reader (--scanner badge-serial:/dev/ttyUSB0 or badge-hid:/dev/hidraw0)' },
    );
  }
  for (let attempt = 1; ; attempt++) {
    if (!(await scanner.waitForPresence({ timeoutMs }))) {
      throw new AgentError(
        'ENROLL_TIMEOUT',
        `no badge read within ${Math.round(timeoutMs / 1000)} s`,
        { modality: 'badge' },
        { hint: 'hold the card flat over the reader when asked, then run the command again', retryable: true },
      );
    }
    try {
      return await scanner.readCredential();
    } catch (err) {
      const e = toAgentError(err);
      if (/TRANSPORT|DISCONNECT/.test(e.code) || attempt >= READ_ATTEMPTS) throw e;
      progress({ step: 'retry', message: `the card read failed (${e.code}: ${e.message}); hold it to the reader again` });
      await scanner.feedback('try-again').catch(() => undefined);
    }
  }
}

export async function enrollBadge(
  rt: BadgeEnrollTerminal,
  req: BadgeEnrollRequest,
  progress: (e: Record<string, unknown>) => void,
  worker: BadgeReaderWorker,
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

  const { read, model } = await worker.withScanner(async (scanner) => {
    const model = (await scanner.info()).model;
    progress({ step: 'capture', capture: 1, of: 1, message: 'hold the badge to the reader' });
    const read = await readBadge(scanner, req.timeoutMs, progress);
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
  worker: BadgeReaderWorker,
  progress: (e: Record<string, unknown>) => void,
  timeoutMs: number,
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
  return worker.withScanner(async (scanner) => {
    progress({ step: 'capture', message: 'hold the badge to the reader' });
    const t0 = performance.now();
    const read = await readBadge(scanner, timeoutMs, progress);
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
