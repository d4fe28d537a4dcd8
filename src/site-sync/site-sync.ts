/**
 * Site template sync. Every enrolment is published, encrypted under the site key, as a retained
 * message on `<prefix>/<site>/templates/<employeeCode>`; every terminal of the site applies it to
 * its own cache. An empty retained message deletes that person's templates everywhere.
 *
 * Conflict rule: a record carries `updatedAt` (UTC, ms) and its `origin` terminal. A terminal
 * applies a record when it is newer than what it holds for that person: a later `updatedAt`, or
 * the same `updatedAt` and a greater `origin` (so every terminal converges on the same record).
 * A record replaces all of that person's templates (set semantics, not a merge). An empty message
 * always deletes (the broker then holds no record, so a terminal joining later sees none); a
 * re-enrolment after a deletion publishes a new record.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { AgentError, toAgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import { logger } from '../core/logger.js';
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

export interface SiteTemplateRecord {
  v: 1;
  employeeCode: string;
  updatedAt: string;
  origin: string;
  templates: SyncedTemplate[];
}

/** What the sync needs from the local template cache. */
export interface SiteTemplateStore {
  /** The version this terminal holds for a person, or null. */
  versionOf(employeeCode: string): Promise<{ updatedAt: string; origin: string } | null>;
  /** Replaces the person's templates with the record's. */
  apply(record: SiteTemplateRecord): Promise<void>;
  /** Deletes the person's templates; resolves to how many were removed. */
  remove(employeeCode: string): Promise<number>;
}

export interface SiteSyncOptions {
  url: string;
  mqttOptions?: IClientOptions;
  prefix: string;
  site: string;
  terminal: string;
  key: Buffer;
  store: SiteTemplateStore;
}

export interface SiteSyncEvents extends Record<string, unknown> {
  applied: { employeeCode: string; origin: string; templates: number };
  removed: { employeeCode: string; templates: number };
  skipped: { employeeCode: string; reason: string };
  error: { employeeCode: string | null; error: AgentError };
}

const log = logger('ops:site-sync');

/** True when record `a` wins over version `b`. */
export function isNewer(a: { updatedAt: string; origin: string }, b: { updatedAt: string; origin: string } | null): boolean {
  if (!b) return true;
  const ta = Date.parse(a.updatedAt);
  const tb = Date.parse(b.updatedAt);
  if (ta !== tb) return ta > tb;
  return a.origin > b.origin;
}

export function parseRecord(plaintext: Buffer, employeeCode: string): SiteTemplateRecord {
  let r: SiteTemplateRecord;
  try {
    r = JSON.parse(plaintext.toString('utf8')) as SiteTemplateRecord;
  } catch {
    throw new AgentError('OPS_SYNC_MALFORMED', `the site template record for ${employeeCode} is not JSON`, { employeeCode });
  }
  if (r.v !== 1 || r.employeeCode !== employeeCode || typeof r.updatedAt !== 'string' || Number.isNaN(Date.parse(r.updatedAt)) || typeof r.origin !== 'string' || !Array.isArray(r.templates)) {
    throw new AgentError('OPS_SYNC_MALFORMED', `the site template record for ${employeeCode} does not have the v1 shape`, { employeeCode });
  }
  for (const t of r.templates) {
    if (typeof t.id !== 'string' || typeof t.modality !== 'string' || typeof t.format !== 'string' || typeof t.data !== 'string') {
      throw new AgentError('OPS_SYNC_MALFORMED', `a template in the site record for ${employeeCode} lacks id, modality, format or data`, { employeeCode });
    }
  }
  return r;
}

export class SiteTemplateSync extends TypedEmitter<SiteSyncEvents> {
  readonly #o: SiteSyncOptions;
  #client: MqttClient | null = null;
  #stopping = false;
  readonly #away = new RepeatedWarning(log);
  /** Messages are applied one at a time, in arrival order. */
  #chain: Promise<void> = Promise.resolve();
  readonly counters = { applied: 0, removed: 0, skipped: 0, errors: 0, published: 0 };

  constructor(options: SiteSyncOptions) {
    super();
    if (options.key.length !== 32) throw new AgentError('OPS_SYNC_NO_KEY', 'the site key must be 32 bytes', {}, { hint: 'set siteKey in the secrets file (64 hex characters)' });
    this.#o = options;
  }

  get topicFilter(): string {
    return siteTemplatesTopic(this.#o.prefix, this.#o.site);
  }

  async start(): Promise<void> {
    const client = mqtt.connect(this.#o.url, { ...this.#o.mqttOptions, clientId: `${this.#o.terminal}-sync`, clean: true, reconnectPeriod: 2000 });
    this.#client = client;
    client.on('message', (topic, payload, packet) => {
      this.#chain = this.#chain.then(() => this.#onMessage(topic, payload, packet.retain));
    });
    client.on('connect', () => {
      this.#away.ok({ url: this.#o.url }, 'site template sync reached the broker again');
      client.subscribeAsync(this.topicFilter, { qos: 1 }).catch((err: Error) => log.warn({ err: err.message }, 'subscribe failed'));
    });
    client.on('error', (err) => {
      if (!this.#stopping) this.#away.warn({ url: this.#o.url, err: err.message }, 'site template sync cannot reach the broker; reconnecting');
    });
  }

  /** Waits until every message received so far has been applied. */
  idle(): Promise<void> {
    return this.#chain;
  }

  async #onMessage(topic: string, payload: Buffer, _retained: boolean): Promise<void> {
    const prefix = this.topicFilter.slice(0, -1);
    if (!topic.startsWith(prefix)) return;
    const employeeCode = decodeTopicPart(topic.slice(prefix.length));
    try {
      if (payload.length === 0) {
        const n = await this.#o.store.remove(employeeCode);
        this.counters.removed++;
        log.info({ employeeCode, templateCount: n }, 'templates deleted through the site');
        this.emit('removed', { employeeCode, templates: n });
        return;
      }
      const record = parseRecord(openSiteRecord(this.#o.key, this.#o.site, employeeCode, payload), employeeCode);
      const held = await this.#o.store.versionOf(employeeCode);
      if (!isNewer(record, held)) {
        this.counters.skipped++;
        this.emit('skipped', { employeeCode, reason: held && held.updatedAt === record.updatedAt && held.origin === record.origin ? 'already held' : 'older than the local record' });
        return;
      }
      await this.#o.store.apply(record);
      this.counters.applied++;
      log.info({ employeeCode, origin: record.origin, templateCount: record.templates.length }, 'templates applied from the site');
      this.emit('applied', { employeeCode, origin: record.origin, templates: record.templates.length });
    } catch (err) {
      const e = toAgentError(err, 'OPS_SYNC_FAILED', { employeeCode });
      this.counters.errors++;
      log.error({ employeeCode, code: e.code, err: e.message }, 'a site template message could not be applied');
      this.emit('error', { employeeCode, error: e });
    }
  }

  #requireClient(): MqttClient {
    if (!this.#client) throw new AgentError('OPS_SYNC_NOT_STARTED', 'site sync is not started');
    return this.#client;
  }

  /** Publishes a person's templates to the site (retained). */
  async publish(record: SiteTemplateRecord): Promise<void> {
    const client = this.#requireClient();
    const payload = sealSiteRecord(this.#o.key, this.#o.site, record.employeeCode, Buffer.from(JSON.stringify(record)));
    await client.publishAsync(siteTemplatesTopic(this.#o.prefix, this.#o.site, record.employeeCode), payload, { qos: 1, retain: true });
    this.counters.published++;
  }

  /** Deletes a person's templates on every terminal of the site (an empty retained message). */
  async publishDeletion(employeeCode: string): Promise<void> {
    const client = this.#requireClient();
    await client.publishAsync(siteTemplatesTopic(this.#o.prefix, this.#o.site, employeeCode), Buffer.alloc(0), { qos: 1, retain: true });
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
