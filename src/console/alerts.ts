/**
 * The console's alerts: every terminal is judged against the rules (`console.alerts`,
 * alert-rules.ts) when it changes and every 2 s, and each site's set of alerts is published
 * retained on `<prefix>/<site>/alerts` whenever it changes (at most 500 alerts a document, then
 * `truncated: N`), and again after a reconnect.
 */
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
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
  /** The alert codes last published per site (`site` → its terminal/code keys). */
  readonly #published = new Map<string, string>();
  #timer: NodeJS.Timeout | null = null;

  constructor(ctx: ConsoleContext, broker: BrokerLink) {
    this.#ctx = ctx;
    this.#broker = broker;
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
    const { book, settings, events } = this.#ctx;
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

  /** Publishes each site whose set of alerts differs from what was last published. */
  publish(now: number): void {
    if (!this.#broker.connected) return;
    const { fleet, book, health, options } = this.#ctx;
    const sites = new Set(fleet.records().map((r) => r.site));
    for (const site of sites) {
      const alerts = book.forSite(site);
      const keys = alerts.map((a) => `${a.terminal}/${a.code}`).join(',');
      if (this.#published.get(site) === keys) continue;
      this.#published.set(site, keys);
      const doc = {
        site,
        at: new Date(now).toISOString(),
        count: alerts.length,
        alerts: alerts.slice(0, MAX_ALERTS_PER_SITE_DOC).map(({ site: _site, ...a }) => a),
        ...(alerts.length > MAX_ALERTS_PER_SITE_DOC ? { truncated: alerts.length - MAX_ALERTS_PER_SITE_DOC } : {}),
      };
      health.alertPublishes++;
      this.#broker.publish(`${options.prefix}/${site}/alerts`, JSON.stringify(doc)).catch((err: unknown) => {
        this.#published.delete(site);
        log.warn({ err: toAgentError(err).message, site }, "could not publish the site's alerts");
      });
    }
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), JUDGE_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
