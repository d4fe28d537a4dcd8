/**
 * The console's alerts: every terminal is judged against the rules (`console.alerts`,
 * alert-rules.ts) when it changes and every 2 s, and each site's set of alerts is published
 * retained on `<prefix>/<site>/alerts` whenever it changes (at most 500 alerts a document, then
 * `truncated: N`), and again after a reconnect.
 *
 * The document is signed with the site's ops key when the console holds it (`sig`, terminal `""`,
 * leaf `alerts`: src/ops/telemetry-auth.ts), and the console watches the topic: a document there
 * that is not the one it published (a forged `count: 0`) is answered with its own at once (at most
 * once a second per site), so a forgery does not stay until the alerts change.
 */
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { SITE_OPS_KEY_ID } from '../config/secrets.js';
import { TelemetrySigner } from '../ops/telemetry-auth.js';
import { judgeTerminal } from './alert-rules.js';
import type { BrokerLink, ConsoleContext, ConsoleFeature } from './console-context.js';
import { stateSince, type TerminalRecord } from './console-fleet.js';

const log = logger('console');

export const JUDGE_MS = 2000;
export const MAX_ALERTS_PER_SITE_DOC = 500;

export class Alerts implements ConsoleFeature {
  readonly name = 'alerts';
  readonly #ctx: ConsoleContext;
  readonly #broker: BrokerLink;
  /** The alerts last published per site (`site` → their terminals, codes, severities and messages). */
  readonly #published = new Map<string, string>();
  /** The payload last published per site, and when it was last published again over another. */
  readonly #payloads = new Map<string, string>();
  readonly #healedAt = new Map<string, number>();
  /** Signs per site (the MAC names the site) with the site's ops key; none without it. */
  readonly #key: Buffer | null;
  readonly #signers = new Map<string, TelemetrySigner>();
  readonly #conn = Date.now();
  #timer: NodeJS.Timeout | null = null;

  constructor(ctx: ConsoleContext, broker: BrokerLink) {
    this.#ctx = ctx;
    this.#broker = broker;
    this.#key = ctx.options.telemetryKeys?.key(SITE_OPS_KEY_ID) ?? null;
    broker.follow(`${ctx.options.prefix}/+/alerts`, (payload, topic) => this.#onAlertsTopic(topic, payload));
    ctx.fleet.on('change', (r) => this.judge(r, Date.now()));
    ctx.fleet.on('remove', (key) => {
      const [site, terminal] = key.split('/') as [string, string];
      if (ctx.book.set(site, terminal, [], Date.now())) ctx.events.alertsChanged(null);
    });
    // A new connection may be a new broker: publish every site again.
    ctx.events.on('broker', (up) => {
      if (up) this.#published.clear();
    });
  }

  /** Judges one terminal now; a change of its alerts is announced. */
  judge(r: TerminalRecord, now: number): void {
    const { book, settings, events, fleet } = this.#ctx;
    // Unsigned terminals raise nothing where the console verifies: they may be anyone's.
    if (!r.verified && fleet.canVerify) return;
    if (book.set(r.site, r.terminal, judgeTerminal(r.row, { stateSince: stateSince(r).at }, settings.alerts, now), now))
      events.alertsChanged(r.key);
  }

  /** Judges every terminal (while the broker is there) and publishes the sites whose alerts changed. */
  tick(now = Date.now()): void {
    // Without the broker the console sees nothing new: judging the clock against old figures
    // would call every terminal silent. The page says the console lost the broker instead.
    if (this.#ctx.health.mqttConnected) for (const r of this.#ctx.fleet.records()) this.judge(r, now);
    this.publish(now);
  }

  /** Publishes each site whose alerts (codes, severities, messages) differ from what was last published. */
  publish(now: number): void {
    if (!this.#broker.connected) return;
    const { fleet, book } = this.#ctx;
    const sites = new Set(fleet.records().map((r) => r.site));
    for (const site of sites) {
      const alerts = book.forSite(site);
      // Codes, severities and messages: a terminal degraded for another reason keeps its code, and
      // its site's document must not go on naming the old reason.
      const keys = JSON.stringify(alerts.map((a) => [a.terminal, a.code, a.severity, a.message]));
      if (this.#published.get(site) === keys) continue;
      this.#published.set(site, keys);
      const doc = {
        site,
        at: new Date(now).toISOString(),
        count: alerts.length,
        alerts: alerts.slice(0, MAX_ALERTS_PER_SITE_DOC).map(({ site: _site, ...a }) => a),
        ...(alerts.length > MAX_ALERTS_PER_SITE_DOC ? { truncated: alerts.length - MAX_ALERTS_PER_SITE_DOC } : {}),
      };
      const payload = JSON.stringify(this.#sign(site, doc));
      this.#payloads.set(site, payload);
      this.#send(site, payload);
    }
  }

  #sign(site: string, doc: Record<string, unknown>): Record<string, unknown> {
    if (!this.#key) return doc;
    let signer = this.#signers.get(site);
    if (!signer) {
      signer = new TelemetrySigner({ site, terminal: '', key: this.#key });
      signer.beginConnection(this.#conn);
      this.#signers.set(site, signer);
    }
    return signer.sign('alerts', doc);
  }

  /** A document on a site's alerts topic that is not ours: ours again (at most once a second per site). */
  #onAlertsTopic(topic: string, payload: Buffer): void {
    const site = topic.slice(this.#ctx.options.prefix.length + 1, -'/alerts'.length);
    const ours = this.#payloads.get(site);
    if (ours === undefined || payload.toString('utf8') === ours || !this.#broker.connected) return;
    const now = Date.now();
    if (now - (this.#healedAt.get(site) ?? 0) < 1000) return;
    this.#healedAt.set(site, now);
    log.warn({ site }, "another client published this site's alerts; publishing the console's again");
    this.#send(site, ours);
  }

  #send(site: string, payload: string): void {
    this.#ctx.health.alertPublishes++;
    this.#broker.publish(`${this.#ctx.options.prefix}/${site}/alerts`, payload).catch((err: unknown) => {
      this.#published.delete(site);
      log.warn({ err: toAgentError(err).message, site }, "could not publish the site's alerts");
    });
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), JUDGE_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
