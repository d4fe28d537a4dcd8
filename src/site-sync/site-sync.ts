/**
 * Site template sync. Every enrolment is published, encrypted under the site key, as a retained
 * message on `<prefix>/<site>/templates/<employeeCode>`; every terminal of the site applies it to
 * its own cache. A deletion is a sealed tombstone on the same topic (same key, same additional
 * data, `deleted: true`, no templates), also retained, so a terminal that was offline applies it
 * when it comes back.
 *
 * Versions: each person has a version that only grows, tombstones included, and every terminal
 * keeps the one it holds (person_versions in the agent database, kept after a deletion). A
 * terminal applies a record only when its version is above the one held; the same version with
 * the same content (SHA-256 of the plaintext) is a repeat and skipped; an older version, or the
 * same version with other content, is refused and logged (`OPS_SYNC_REFUSED`, counter
 * `refused`), so a replayed old record cannot bring a deleted person back. A publishing terminal
 * takes as version the larger of now (ms since the epoch) and one above what it holds.
 *
 * A bare empty message (which clears a retained message on the broker) is ignored and logged: it
 * deletes nothing. Records are bounded (`maxPayloadBytes`) and validated by schema; an employee
 * code in a topic must satisfy the shared rule (src/api/employee-code.ts) in NFC.
 */
import { createHash } from 'node:crypto';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { z } from 'zod';
import { checkEmployeeCode } from '../api/employee-code.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import { logger } from '../core/logger.js';
import { TEMPLATE_MODALITIES } from '../core/modality.js';
import { FORMAT_MODALITY } from '../store/template-schema.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, publishChecked } from '../upload/mqtt-publish.js';
import { ThrottledLog } from '../ops/throttled-log.js';
import { RepeatedWarning } from '../core/repeated-warning.js';
import { openSiteRecord, sealSiteRecord } from './site-crypto.js';
import { decodeTopicPart, siteTemplatesTopic } from '../ops/topics.js';

export interface SyncedTemplate {
  id: string;
  modality: string;
  position: string | null;
  format: string;
  quality: number | null;
  sensorModel: string | null;
  createdAt: string;
  /** base64 of the template bytes (inside the encrypted record only). */
  data: string;
}

/** A person's record (or tombstone) as published: the plaintext inside the sealed envelope. */
export interface SiteTemplateRecord {
  v: 2;
  employeeCode: string;
  /** Only grows per person; a terminal applies a record only above the version it holds. */
  version: number;
  updatedAt: string;
  origin: string;
  /** A tombstone: the person is deleted on every terminal of the site. */
  deleted: boolean;
  templates: SyncedTemplate[];
}

/** What a terminal holds for a person. */
export interface HeldVersion {
  version: number;
  deleted: boolean;
  /** SHA-256 (hex) of the plaintext of the record held, or null when not known. */
  digest: string | null;
}

/** What the sync needs from the local template cache. */
export interface SiteTemplateStore {
  /** The version this terminal holds for a person (a tombstone included), or null. */
  versionOf(employeeCode: string): Promise<HeldVersion | null>;
  /** Replaces the person's templates with the record's and records its version, if above the one held; false when not. */
  apply(record: SiteTemplateRecord, digest: string): Promise<boolean>;
  /** Deletes the person's templates and records the tombstone's version, if above; the number removed, or null when not. */
  remove(tombstone: SiteTemplateRecord, digest: string): Promise<number | null>;
  /** Records the version of a record this terminal published (its templates are already here). */
  note(record: SiteTemplateRecord, digest: string): Promise<void>;
}

export interface SiteSyncOptions {
  url: string;
  mqttOptions?: IClientOptions;
  prefix: string;
  site: string;
  terminal: string;
  key: Buffer;
  store: SiteTemplateStore;
  /** The largest record published or accepted (mqtt.maxPayloadBytes). */
  maxPayloadBytes?: number;
  now?: () => number;
}

export interface SiteSyncEvents extends Record<string, unknown> {
  applied: { employeeCode: string; origin: string; templates: number; version: number };
  removed: { employeeCode: string; templates: number; version: number };
  skipped: { employeeCode: string; reason: string };
  refused: { employeeCode: string | null; reason: string };
  error: { employeeCode: string | null; error: AgentError };
}

const log = logger('ops:site-sync');

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TERMINAL_ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_TEMPLATES = 256;

const TemplateSchema = z.object({
  id: z.string().min(1).max(128),
  modality: z.enum(TEMPLATE_MODALITIES),
  position: z.string().min(1).max(32).nullable(),
  format: z.enum(Object.keys(FORMAT_MODALITY) as [string, ...string[]]),
  quality: z.number().int().min(0).max(255).nullable(),
  sensorModel: z.string().max(64).nullable(),
  createdAt: z.string().max(40),
  data: z.string().min(1).regex(BASE64),
});

const common = {
  employeeCode: z.string().max(512),
  updatedAt: z
    .string()
    .max(40)
    .refine((s) => !Number.isNaN(Date.parse(s)), 'a date-time'),
  origin: z.string().regex(TERMINAL_ID, 'a terminal id'),
  templates: z.array(TemplateSchema).max(MAX_TEMPLATES),
};

const RecordV2Schema = z.object({
  v: z.literal(2),
  version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  deleted: z.boolean(),
  ...common,
});
/** Records of agents before versions (v1): live records whose version is their updatedAt in ms. */
const RecordV1Schema = z.object({ v: z.literal(1), ...common });

export function digestOf(plaintext: Buffer): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

/** Parses and validates a record's plaintext (v2, or v1 read as a live record versioned by its updatedAt). */
export function parseRecord(plaintext: Buffer, employeeCode: string): SiteTemplateRecord {
  const malformed = (why: string) =>
    new AgentError('OPS_SYNC_MALFORMED', `the site template record for ${employeeCode} ${why}`, { employeeCode });
  let json: unknown;
  try {
    json = JSON.parse(plaintext.toString('utf8'));
  } catch {
    throw malformed('is not JSON');
  }
  const v = (json as { v?: unknown } | null)?.v;
  if (v === 1) {
    const r = RecordV1Schema.safeParse(json);
    if (!r.success) throw malformed(`does not have the v1 shape (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message})`);
    if (r.data.employeeCode !== employeeCode) throw malformed('names another employee than its topic');
    return { ...r.data, v: 2, version: Date.parse(r.data.updatedAt), deleted: false };
  }
  const r = RecordV2Schema.safeParse(json);
  if (!r.success) throw malformed(`does not have the v2 shape (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message})`);
  if (r.data.employeeCode !== employeeCode) throw malformed('names another employee than its topic');
  if (r.data.deleted && r.data.templates.length > 0) throw malformed('is a tombstone with templates');
  return r.data;
}

export type Verdict = 'apply' | 'same' | 'older' | 'conflict';

/** What a terminal does with a record of `version` and `digest` given what it holds. */
export function judgeRecord(version: number, digest: string, held: HeldVersion | null): Verdict {
  if (!held || version > held.version) return 'apply';
  if (version < held.version) return 'older';
  return held.digest === null || held.digest === digest ? 'same' : 'conflict';
}

/** The version a terminal publishes next for a person: now, or one above what it holds if that is later. */
export function nextVersion(held: HeldVersion | null, now: number, atLeast = 0): number {
  return Math.max(now, atLeast, (held?.version ?? 0) + 1);
}

/** A tombstone for `employeeCode` above what is held. */
export function tombstone(employeeCode: string, held: HeldVersion | null, origin: string, now: number): SiteTemplateRecord {
  return {
    v: 2,
    employeeCode,
    version: nextVersion(held, now),
    updatedAt: new Date(now).toISOString(),
    origin,
    deleted: true,
    templates: [],
  };
}

/** Deletes a person here with a tombstone above what is held (site sync on or off); the templates removed and the tombstone. */
export async function deleteWithTombstone(
  store: SiteTemplateStore,
  employeeCode: string,
  origin: string,
  now: number,
): Promise<{ removed: number; record: SiteTemplateRecord }> {
  const record = tombstone(employeeCode, await store.versionOf(employeeCode), origin, now);
  const removed = await store.remove(record, digestOf(Buffer.from(JSON.stringify(record))));
  if (removed === null)
    throw new AgentError(
      'OPS_SYNC_FAILED',
      `the deletion of ${employeeCode} lost against a newer record received meanwhile`,
      { employeeCode },
      { hint: 'send the deletion again' },
    );
  return { removed, record };
}

export class SiteTemplateSync extends TypedEmitter<SiteSyncEvents> {
  readonly #o: SiteSyncOptions;
  readonly #max: number;
  readonly #now: () => number;
  #client: MqttClient | null = null;
  #stopping = false;
  readonly #away = new RepeatedWarning(log);
  /** Refused and failed messages: anyone on the broker can publish them, as fast as it likes. */
  readonly #noted = new ThrottledLog(log);
  /** Messages are applied one at a time, in arrival order. */
  #chain: Promise<void> = Promise.resolve();
  readonly counters = { applied: 0, removed: 0, skipped: 0, refused: 0, errors: 0, published: 0 };

  constructor(options: SiteSyncOptions) {
    super();
    if (options.key.length !== 32)
      throw new AgentError(
        'OPS_SYNC_NO_KEY',
        'the site key must be 32 bytes',
        {},
        { hint: 'set siteKey in the secrets file (64 hex characters)' },
      );
    this.#o = options;
    this.#max = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.#now = options.now ?? Date.now;
  }

  get topicFilter(): string {
    return siteTemplatesTopic(this.#o.prefix, this.#o.site);
  }

  async start(): Promise<void> {
    const client = mqtt.connect(this.#o.url, {
      ...this.#o.mqttOptions,
      clientId: `${this.#o.terminal}-sync`,
      clean: true,
      reconnectPeriod: 2000,
    });
    this.#client = client;
    client.on('message', (topic, payload) => {
      this.#chain = this.#chain
        .then(() => this.#onMessage(topic, payload))
        .catch((err: unknown) => log.error({ err: toAgentError(err).toJSON() }, 'a site template message could not be handled'));
    });
    client.on('connect', () => {
      this.#away.ok({ url: this.#o.url }, 'site template sync reached the broker again');
      client.subscribeAsync(this.topicFilter, { qos: 1 }).catch((err: Error) => log.warn({ err: err.message }, 'subscribe failed'));
    });
    client.on('error', (err) => {
      if (!this.#stopping)
        this.#away.warn({ url: this.#o.url, err: err.message }, 'site template sync cannot reach the broker; reconnecting');
    });
  }

  /** Waits until every message received so far has been applied. */
  idle(): Promise<void> {
    return this.#chain;
  }

  #refuse(employeeCode: string | null, reason: string, context: Record<string, unknown> = {}): void {
    this.counters.refused++;
    this.#noted.warn({ employeeCode, ...context, code: 'OPS_SYNC_REFUSED' }, `site template message refused: ${reason}`);
    this.emit('refused', { employeeCode, reason });
  }

  async #onMessage(topic: string, payload: Buffer): Promise<void> {
    const prefix = this.topicFilter.slice(0, -1);
    if (!topic.startsWith(prefix)) return;
    let employeeCode: string | null = null;
    try {
      const level = topic.slice(prefix.length);
      const decoded = level.length <= 768 ? decodeTopicPart(level) : level;
      const code = checkEmployeeCode(decoded);
      if (!code.ok || code.code !== decoded) {
        throw new AgentError(
          'OPS_SYNC_MALFORMED',
          `a site template topic does not name a valid employee code: ${code.ok ? 'not in Unicode NFC' : code.problem}`,
          {},
        );
      }
      employeeCode = decoded;
      if (payload.length === 0) {
        this.#refuse(employeeCode, 'an empty message deletes nothing (a deletion is a sealed tombstone)');
        return;
      }
      if (payload.length > this.#max)
        throw new AgentError(
          'OPS_SYNC_MALFORMED',
          `the site template message for ${employeeCode} is ${payload.length} bytes; at most ${this.#max} are read`,
          { employeeCode },
        );
      const plaintext = openSiteRecord(this.#o.key, this.#o.site, employeeCode, payload);
      const record = parseRecord(plaintext, employeeCode);
      const digest = digestOf(plaintext);
      const held = await this.#o.store.versionOf(employeeCode);
      const verdict = judgeRecord(record.version, digest, held);
      if (verdict === 'same') {
        if (held?.digest === null) await this.#o.store.note(record, digest);
        this.counters.skipped++;
        this.emit('skipped', { employeeCode, reason: 'already held' });
        return;
      }
      if (verdict !== 'apply') {
        const why =
          verdict === 'older'
            ? `version ${record.version} is older than the ${held!.deleted ? 'deletion' : 'record'} held (version ${held!.version})`
            : `version ${record.version} is the one held, with other content`;
        this.#refuse(employeeCode, why, {
          version: record.version,
          heldVersion: held!.version,
          origin: record.origin,
          deleted: record.deleted,
        });
        return;
      }
      if (record.deleted) {
        const n = await this.#o.store.remove(record, digest);
        if (n === null) return this.#refuse(employeeCode, 'a newer record arrived meanwhile', { version: record.version });
        this.counters.removed++;
        log.info({ employeeCode, origin: record.origin, version: record.version, templateCount: n }, 'templates deleted through the site');
        this.emit('removed', { employeeCode, templates: n, version: record.version });
        return;
      }
      if (!(await this.#o.store.apply(record, digest)))
        return this.#refuse(employeeCode, 'a newer record arrived meanwhile', { version: record.version });
      this.counters.applied++;
      log.info(
        { employeeCode, origin: record.origin, version: record.version, templateCount: record.templates.length },
        'templates applied from the site',
      );
      this.emit('applied', { employeeCode, origin: record.origin, templates: record.templates.length, version: record.version });
    } catch (err) {
      const e = toAgentError(err, 'OPS_SYNC_FAILED', { employeeCode });
      this.counters.errors++;
      this.#noted.error({ employeeCode, code: e.code, err: e.message }, 'a site template message could not be applied');
      if (this.listenerCount('error') > 0) this.emit('error', { employeeCode, error: e });
    }
  }

  #requireClient(): MqttClient {
    if (!this.#client) throw new AgentError('OPS_SYNC_NOT_STARTED', 'site sync is not started');
    return this.#client;
  }

  /**
   * Publishes a person's templates to the site (retained). The version is recorded here first,
   * so this terminal takes its own record back as a repeat.
   */
  async publish(record: SiteTemplateRecord): Promise<void> {
    this.#requireClient();
    const plaintext = this.#plaintext(record);
    await this.#o.store.note(record, digestOf(plaintext));
    await this.#send(record, plaintext);
  }

  /** Publishes a tombstone already applied here (deleteWithTombstone), sealed and retained. */
  async publishTombstone(record: SiteTemplateRecord): Promise<void> {
    this.#requireClient();
    if (!record.deleted) throw new AgentError('INTERNAL', 'publishTombstone was given a live record');
    await this.#send(record, this.#plaintext(record));
  }

  /**
   * Deletes a person on every terminal of the site: deleted here under a tombstone above the
   * version held, then the sealed tombstone is published, retained.
   */
  async publishDeletion(employeeCode: string): Promise<{ templatesRemoved: number; version: number }> {
    this.#requireClient();
    const { removed, record } = await deleteWithTombstone(this.#o.store, employeeCode, this.#o.terminal, this.#now());
    await this.publishTombstone(record);
    return { templatesRemoved: removed, version: record.version };
  }

  #plaintext(record: SiteTemplateRecord): Buffer {
    const plaintext = Buffer.from(JSON.stringify(record));
    if (plaintext.length > this.#max)
      throw new AgentError(
        'MQTT_PUBLISH_INVALID',
        `the site record of ${record.employeeCode} is ${plaintext.length} bytes; at most ${this.#max} are published`,
        { employeeCode: record.employeeCode },
        { hint: "raise mqtt.maxPayloadBytes (and the broker's message_size_limit), or enrol fewer templates for this person" },
      );
    return plaintext;
  }

  async #send(record: SiteTemplateRecord, plaintext: Buffer): Promise<void> {
    const client = this.#requireClient();
    const payload = sealSiteRecord(this.#o.key, this.#o.site, record.employeeCode, plaintext);
    await publishChecked(
      client,
      siteTemplatesTopic(this.#o.prefix, this.#o.site, record.employeeCode),
      payload,
      { qos: 1, retain: true },
      this.#max,
    );
    this.counters.published++;
  }

  /** Receives every retained record again (the `sync-templates` command). */
  async resync(): Promise<void> {
    const client = this.#requireClient();
    await client.unsubscribeAsync(this.topicFilter);
    await client.subscribeAsync(this.topicFilter, { qos: 1 });
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#chain;
    await this.#client?.endAsync().catch(() => undefined);
    this.#client = null;
  }
}
