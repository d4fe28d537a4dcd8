/**
 * The operations console (`edge-agent console`): a web page served from here, fed live from the
 * broker's retained state, info and metrics of every terminal under the prefix.
 *
 * - the fleet, grouped by site, updated in the page through Server-Sent Events (`/api/events`:
 *   a `snapshot`, then `rows` with the terminals that changed, at most every 500 ms, and
 *   `alerts`);
 * - a terminal's page (`/api/terminal`): 24 hours of metric history, its state changes, its last
 *   errors, its alerts, and signed commands (dead letters are listed with `queue-list`);
 * - alert rules (`console.alerts`), judged every 2 s and on every change, shown in the page and
 *   published retained on `<prefix>/<site>/alerts` whenever a site's set of alerts changes;
 * - `/metrics` for Prometheus; Home Assistant discovery for the sites that opt in.
 *
 * Listening beyond loopback needs a login (consolePassword in the secrets); with a login every
 * page but /login and /metrics needs a session. Commands need a login and an ops key.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { z } from 'zod';
import type { AgentConfig } from '../config/config.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { NO_ARGUMENTS, type CommandResponse } from '../ops/commands.js';
import { oldestPendingAgeNow } from '../ops/fleet-row.js';
import { sendCommand } from '../ops/ops-client.js';
import { OPS_ARGUMENTS } from '../ops/ops-router.js';
import { publishChecked } from '../upload/mqtt-publish.js';
import { AlertBook, judgeTerminal } from './alert-rules.js';
import { ConsoleFleet, stateSince, type TerminalRecord } from './console-fleet.js';
import { discoveryMessages, siteOptedIn } from './home-assistant.js';
import { clearedCookie, cookieValue, SESSION_COOKIE, sessionCookie, type ConsoleLogin } from './login.js';
import { ConsoleMetrics, type ConsoleHealth } from './prometheus.js';
import {
  escapeHtml,
  fail,
  hostAllowed,
  isLoopback,
  loadAssets,
  originAllowed,
  readBody,
  readJson,
  send,
  sendAsset,
  sendError,
  sendJson,
  securityHeaders,
} from './web.js';

const log = logger('console');

/** The commands the page may send (delete-user and reload-config stay with edge-agent ops send). */
export const CONSOLE_COMMANDS = [
  'ping',
  'info',
  'queue-status',
  'queue-list',
  'retry-dead',
  'sync-templates',
  'set-log-level',
  'restart',
] as const;
export type ConsoleCommand = (typeof CONSOLE_COMMANDS)[number];

const FLUSH_MS = 500;
const JUDGE_MS = 2000;
const MAX_COMMANDS_IN_FLIGHT = 8;
const MAX_ALERTS_PER_SITE_DOC = 500;
const HA_PUBLISHES_PER_TICK = 500;

export interface ConsoleOptions {
  /** The broker, and the options of the console's client (credentials, TLS). */
  url: string;
  mqttOptions?: IClientOptions;
  prefix: string;
  maxPayloadBytes: number;
  settings: AgentConfig['console'];
  /** Overrides of settings.host / settings.port (the command's flags). */
  host?: string;
  port?: number;
  login: ConsoleLogin | null;
  /** The key that signs commands, and its key id; null: no commands. */
  signer: { key: Buffer; kid: string } | null;
  commandTimeoutMs?: number;
}

export interface RunningConsole {
  /** `http://127.0.0.1:8470/` */
  url: string;
  host: string;
  port: number;
  commands: { enabled: boolean; reason: string | null; kid: string | null };
  loginRequired: boolean;
  stop(): Promise<void>;
}

/** One terminal as the fleet table shows it: short keys, times in ms. */
interface TableRow {
  key: string;
  site: string;
  terminal: string;
  state: string | null;
  since: number | null;
  sinceExact: boolean;
  lastSeen: number | null;
  metricsAt: number | null;
  pending: number | null;
  oldestSec: number | null;
  dead: number | null;
  lastDelivery: number | null;
  scanners: number | null;
  scannersReady: number | null;
  idP95: number | null;
  capP95: number | null;
  clock: boolean | null;
  temp: number | null;
  disk: number | null;
  version: string | null;
  alerts: number;
  severity: 'critical' | 'warning' | null;
}

const ms = (iso: string | null) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
};

const CommandBody = z.strictObject({
  site: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  terminal: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  command: z.enum(CONSOLE_COMMANDS),
  args: z.record(z.string(), z.unknown()).optional(),
});

function commandsState(o: ConsoleOptions): RunningConsole['commands'] {
  if (!o.login) return { enabled: false, reason: 'commands need a console login: set consolePassword in the secrets file', kid: null };
  if (!o.signer) return { enabled: false, reason: 'the console holds no ops key (opsKey, opsKeys.<id> or --key-file)', kid: null };
  return { enabled: true, reason: null, kid: o.signer.kid };
}

export async function startConsole(o: ConsoleOptions): Promise<RunningConsole> {
  const s = o.settings;
  const host = o.host ?? s.host;
  const port = o.port ?? s.port;
  if (!isLoopback(host) && !o.login) {
    throw new AgentError(
      'CONSOLE_UNSAFE_HOST',
      `the console would listen on ${host} without a login: anyone who reaches it would see the fleet`,
      { host },
    );
  }
  const assets = loadAssets();
  const secure = s.tls !== null;
  const tls = s.tls ? readTls(s.tls) : null;
  const commands = commandsState(o);
  const startedAt = Date.now();
  const health: ConsoleHealth = {
    startedAt,
    mqttConnected: false,
    messages: 0,
    dropped: 0,
    sseClients: 0,
    alertPublishes: 0,
    httpRequests: 0,
    commandsSent: 0,
  };

  const fleet = new ConsoleFleet({ prefix: o.prefix, historyHours: s.historyHours, maxPayloadBytes: o.maxPayloadBytes });
  const book = new AlertBook();
  const metrics = new ConsoleMetrics();
  const dirty = new Set<string>();
  const removed = new Set<string>();
  let alertsDirty = true;
  /** The alert codes last published per site (`site` → sorted keys). */
  const publishedAlerts = new Map<string, string>();
  /** Home Assistant discovery published per terminal: key → version it was published with. */
  const publishedDiscovery = new Map<string, string>();
  let inFlight = 0;

  const judge = (r: TerminalRecord, now: number) => {
    const changed = book.set(r.site, r.terminal, judgeTerminal(r.row, { stateSince: stateSince(r).at }, s.alerts, now), now);
    if (changed) {
      alertsDirty = true;
      dirty.add(r.key);
    }
  };
  fleet.on('change', (r) => {
    dirty.add(r.key);
    removed.delete(r.key);
    judge(r, Date.now());
  });
  fleet.on('remove', (key) => {
    const [site, terminal] = key.split('/') as [string, string];
    if (book.set(site, terminal, [], Date.now())) alertsDirty = true;
    dirty.delete(key);
    removed.add(key);
  });
  fleet.on('dropped', (reason) => {
    health.dropped++;
    log.debug({ reason }, 'a message was not taken');
  });

  const tableRow = (r: TerminalRecord): TableRow => {
    const since = stateSince(r);
    const alerts = book.forTerminal(r.site, r.terminal);
    const row = r.row;
    return {
      key: r.key,
      site: r.site,
      terminal: r.terminal,
      state: row.state,
      since: since.at,
      sinceExact: since.exact,
      lastSeen: ms(row.lastSeen),
      metricsAt: ms(row.metricsAt),
      pending: row.queuePending,
      oldestSec: row.oldestPendingAgeSec,
      dead: row.dead,
      lastDelivery: ms(row.lastDelivery),
      scanners: row.scannersReady === null ? null : row.scanners.length,
      scannersReady: row.scannersReady,
      idP95: row.identificationP95Ms,
      capP95: row.captureP95Ms,
      clock: row.clockSynchronized,
      temp: row.cpuTempC,
      disk: row.freeDiskMb,
      version: row.version,
      alerts: alerts.length,
      severity: alerts.length === 0 ? null : alerts.some((a) => a.severity === 'critical') ? 'critical' : 'warning',
    };
  };

  // ---- MQTT ----
  const client: MqttClient = mqtt.connect(o.url, {
    reconnectPeriod: 2000,
    connectTimeout: 10_000,
    ...o.mqttOptions,
    clientId: o.mqttOptions?.clientId ?? `console-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
    clean: true,
  });
  const haStatusTopic = `${s.homeAssistant.discoveryPrefix}/status`;
  client.on('connect', () => {
    health.mqttConnected = true;
    alertsDirty = true;
    publishedAlerts.clear();
    publishedDiscovery.clear();
    log.info({ url: o.url }, 'console connected to the broker');
    const topics = ['state', 'info', 'metrics'].map((leaf) => `${o.prefix}/+/+/${leaf}`);
    if (s.homeAssistant.sites.length) topics.push(haStatusTopic);
    // QoS 0: a broker queues at most so many QoS 1 messages for a client (Mosquitto's
    // max_queued_messages, 1000 by default) and drops the rest, so a QoS 1 subscription of a
    // thousand terminals' retained state, info and metrics loses two thirds of them. The console
    // needs only the latest of each, which a new subscription brings again after a reconnect.
    client.subscribeAsync(topics, { qos: 0 }).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not subscribe'));
  });
  client.on('close', () => {
    if (health.mqttConnected) log.warn({ url: o.url }, 'console lost the broker; reconnecting');
    health.mqttConnected = false;
    alertsDirty = true;
  });
  client.on('error', (err) => log.warn({ err: err.message }, 'MQTT error'));
  client.on('message', (topic, payload, packet) => {
    health.messages++;
    if (topic === haStatusTopic) {
      if (payload.toString('utf8') === 'online') publishedDiscovery.clear();
      return;
    }
    try {
      fleet.apply(topic, payload, packet.retain === true);
    } catch (err) {
      health.dropped++;
      log.warn({ err: toAgentError(err).message, topic: topic.slice(0, 200) }, 'a message could not be applied');
    }
  });

  const publish = (topic: string, payload: string) =>
    publishChecked(client, topic, payload, { qos: 1, retain: true }, Math.max(o.maxPayloadBytes, 1024 * 1024));

  const publishSiteAlerts = (now: number) => {
    if (!client.connected) return;
    const sites = new Set(fleet.records().map((r) => r.site));
    for (const site of sites) {
      const alerts = book.forSite(site);
      const keys = alerts.map((a) => `${a.terminal}/${a.code}`).join(',');
      if (publishedAlerts.get(site) === keys) continue;
      publishedAlerts.set(site, keys);
      const doc = {
        site,
        at: new Date(now).toISOString(),
        count: alerts.length,
        alerts: alerts.slice(0, MAX_ALERTS_PER_SITE_DOC).map(({ site: _site, ...a }) => a),
        ...(alerts.length > MAX_ALERTS_PER_SITE_DOC ? { truncated: alerts.length - MAX_ALERTS_PER_SITE_DOC } : {}),
      };
      health.alertPublishes++;
      publish(`${o.prefix}/${site}/alerts`, JSON.stringify(doc)).catch((err: unknown) => {
        publishedAlerts.delete(site);
        log.warn({ err: toAgentError(err).message, site }, "could not publish the site's alerts");
      });
    }
  };

  const publishDiscovery = () => {
    if (!client.connected || s.homeAssistant.sites.length === 0) return;
    let budget = HA_PUBLISHES_PER_TICK;
    for (const r of fleet.records()) {
      if (budget <= 0) break;
      if (!siteOptedIn(s.homeAssistant.sites, r.site)) continue;
      const version = r.row.version ?? '';
      if (publishedDiscovery.get(r.key) === version) continue;
      publishedDiscovery.set(r.key, version);
      for (const m of discoveryMessages(o.prefix, s.homeAssistant.discoveryPrefix, r.row)) {
        budget--;
        publish(m.topic, m.payload).catch((err: unknown) => {
          publishedDiscovery.delete(r.key);
          log.warn({ err: toAgentError(err).message, topic: m.topic }, 'could not publish a Home Assistant discovery document');
        });
      }
    }
  };

  // ---- live updates to the pages ----
  interface LiveClient {
    res: ServerResponse;
    token: string | null;
  }
  const clients = new Set<LiveClient>();
  const sseWrite = (c: LiveClient, event: string, data: unknown) => {
    if (c.res.writableLength > 8 * 1024 * 1024) {
      // A page that does not read: drop it (it reconnects and gets a fresh snapshot).
      c.res.destroy();
      clients.delete(c);
      return;
    }
    c.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const consoleState = () => ({
    mqttConnected: health.mqttConnected,
    loginRequired: o.login !== null,
    commands,
    prefix: o.prefix,
    rules: s.alerts,
    now: Date.now(),
  });
  const snapshot = () => ({ console: consoleState(), terminals: fleet.records().map(tableRow), alerts: book.all() });

  const flush = () => {
    const now = Date.now();
    for (const c of clients) {
      if (o.login && c.token && !o.login.valid(c.token, now, false)) {
        sseWrite(c, 'logout', {});
        c.res.end();
        clients.delete(c);
      }
    }
    if (clients.size === 0) {
      dirty.clear();
      removed.clear();
      alertsDirty = false;
      return;
    }
    if (dirty.size) {
      const rows = [...dirty].flatMap((k) => {
        const r = fleet.get(k);
        return r ? [tableRow(r)] : [];
      });
      dirty.clear();
      for (const c of clients) sseWrite(c, 'rows', rows);
    }
    if (removed.size) {
      const keys = [...removed];
      removed.clear();
      for (const c of clients) sseWrite(c, 'remove', keys);
    }
    if (alertsDirty) {
      alertsDirty = false;
      const payload = { alerts: book.all(), console: consoleState() };
      for (const c of clients) sseWrite(c, 'alerts', payload);
    }
  };
  const flushTimer = setInterval(flush, FLUSH_MS);
  let lastMqtt = health.mqttConnected;
  const judgeTimer = setInterval(() => {
    const now = Date.now();
    // Without the broker the console sees nothing new: judging the clock against old figures
    // would call every terminal silent. The page says the console lost the broker instead.
    if (health.mqttConnected) for (const r of fleet.records()) judge(r, now);
    if (lastMqtt !== health.mqttConnected) {
      lastMqtt = health.mqttConnected;
      alertsDirty = true;
    }
    publishSiteAlerts(now);
    publishDiscovery();
  }, JUDGE_MS);
  const heartbeat = setInterval(() => {
    for (const c of clients) c.res.write(': keep-alive\n\n');
  }, 15_000);

  // ---- HTTP ----
  const sessionOf = (req: IncomingMessage) => cookieValue(req.headers.cookie, SESSION_COOKIE);
  const authed = (req: IncomingMessage) => !o.login || o.login.valid(sessionOf(req));

  const loginPage = (res: ServerResponse, status: number, message: string) => {
    const html = assets
      .get('login.html')!
      .body.toString('utf8')
      .replace('{{message}}', message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');
    send(res, status, html, 'text/html; charset=utf-8');
  };

  const terminalDetail = (key: string) => {
    const r = fleet.get(key);
    if (!r) throw fail(404, 'CONSOLE_NOT_FOUND', `no terminal ${key} has reported under ${o.prefix}`);
    const now = Date.now();
    const since = stateSince(r);
    return {
      row: r.row,
      table: tableRow(r),
      oldestPendingAgeNowSec: oldestPendingAgeNow(r.row, now),
      since: since.at,
      sinceExact: since.exact,
      transitions: r.transitions,
      errors: [...r.errors].reverse(),
      alerts: book.forTerminal(r.site, r.terminal),
      history: r.history?.view(now) ?? null,
      info: r.info,
      metrics: r.metrics,
      commands,
      now,
    };
  };

  const runCommand = async (req: IncomingMessage): Promise<{ status: number; body: unknown }> => {
    if (!commands.enabled || !o.signer) throw fail(403, 'CONSOLE_COMMANDS_OFF', `commands are off: ${commands.reason}`);
    const body = await readJson(req, 16 * 1024, { type: /^application\/json\b/, message: 'send the command as application/json' });
    const parsed = CommandBody.safeParse(body);
    if (!parsed.success)
      throw fail(
        400,
        'CONSOLE_BAD_REQUEST',
        `not a command: ${parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || 'body'}: ${i.message}`)
          .join('; ')}`,
      );
    const { site, terminal, command } = parsed.data;
    const schema = (OPS_ARGUMENTS as Record<string, z.ZodType>)[command] ?? NO_ARGUMENTS;
    const args = schema.safeParse(parsed.data.args ?? {});
    if (!args.success)
      throw fail(
        400,
        'CONSOLE_BAD_REQUEST',
        `bad arguments for ${command}: ${args.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`)
          .join('; ')}`,
      );
    if (!fleet.get(`${site}/${terminal}`))
      throw fail(404, 'CONSOLE_NOT_FOUND', `no terminal ${site}/${terminal} has reported under ${o.prefix}`);
    if (inFlight >= MAX_COMMANDS_IN_FLIGHT)
      throw fail(429, 'CONSOLE_BAD_REQUEST', `${MAX_COMMANDS_IN_FLIGHT} commands are already waiting for answers: wait for them`);
    inFlight++;
    health.commandsSent++;
    const from = req.socket.remoteAddress ?? '?';
    try {
      const { reconnectPeriod: _r, clientId: _c, ...access } = o.mqttOptions ?? {};
      const response: CommandResponse = await sendCommand({
        url: o.url,
        mqttOptions: access,
        base: { prefix: o.prefix, site, terminal },
        command,
        args: args.data as Record<string, unknown>,
        key: o.signer.key,
        kid: o.signer.kid,
        timeoutMs: o.commandTimeoutMs ?? 10_000,
      });
      log.info(
        { site, terminal, command, transaction: response.transaction, status: response.status, from },
        'command sent from the console',
      );
      return { status: 200, body: response };
    } catch (err) {
      const e = toAgentError(err, 'OPS_COMMAND_FAILED');
      log.warn({ site, terminal, command, code: e.code, from }, 'command from the console got no answer');
      return {
        status: 200,
        body: {
          transaction: null,
          status: 'error',
          command,
          error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
          at: new Date().toISOString(),
        },
      };
    } finally {
      inFlight--;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    health.httpRequests++;
    if (!hostAllowed(host, req.headers.host)) {
      send(
        res,
        421,
        'this console answers only to its own address (loopback): open it as http://127.0.0.1:PORT/ or http://localhost:PORT/\n',
        'text/plain; charset=utf-8',
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'POST' && !originAllowed(req, secure, s.allowedOrigins)) {
      throw fail(
        403,
        'CONSOLE_FORBIDDEN_ORIGIN',
        `a POST from ${JSON.stringify((req.headers.origin ?? '(no Origin header)').slice(0, 100))} is not from this console`,
      );
    }
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST')
      throw fail(405, 'CONSOLE_BAD_REQUEST', `${method} is not answered here`);

    if (path.startsWith('/assets/') && method === 'GET') {
      const asset = assets.get(path.slice('/assets/'.length));
      if (!asset || path.endsWith('.html')) throw fail(404, 'CONSOLE_NOT_FOUND', `no file ${path}`);
      return sendAsset(req, res, asset);
    }
    if (path === '/metrics' && method === 'GET') {
      const now = Date.now();
      const body = await metrics.render(
        fleet.records().map((r) => ({ row: r.row, stateSince: stateSince(r).at, alerts: book.count(r.site, r.terminal) })),
        { ...health, sseClients: clients.size },
        book.all(),
        now,
      );
      return send(res, 200, body, metrics.contentType);
    }
    if (path === '/healthz' && method === 'GET')
      return sendJson(res, 200, { ok: true, mqttConnected: health.mqttConnected, terminals: fleet.size });
    if (path === '/login') {
      if (!o.login) return send(res, 303, '', 'text/plain', { Location: '/' });
      if (method === 'GET') return loginPage(res, 200, url.searchParams.has('expired') ? 'Your session ended: log in again.' : '');
      if (method !== 'POST') throw fail(405, 'CONSOLE_BAD_REQUEST', 'GET or POST /login');
      const form = new URLSearchParams(await readBody(req, 4096));
      const result = await o.login.login(form.get('password') ?? '', req.socket.remoteAddress ?? '?');
      if (!result.ok) {
        log.warn({ from: req.socket.remoteAddress, reason: result.reason }, 'console login refused');
        return loginPage(
          res,
          result.reason === 'throttled' ? 429 : 401,
          result.reason === 'throttled' ? 'Too many failed attempts from this address: wait a minute.' : 'Wrong password.',
        );
      }
      log.info({ from: req.socket.remoteAddress }, 'console login');
      return send(res, 303, '', 'text/plain', { Location: '/', 'Set-Cookie': sessionCookie(result.token, secure) });
    }
    if (path === '/logout' && method === 'POST') {
      o.login?.logout(sessionOf(req));
      return send(res, 303, '', 'text/plain', { Location: o.login ? '/login' : '/', 'Set-Cookie': clearedCookie(secure) });
    }
    if (!authed(req)) {
      if (path === '/' && method === 'GET') return send(res, 303, '', 'text/plain', { Location: '/login' });
      throw fail(401, 'CONSOLE_LOGIN_REQUIRED', 'log in first');
    }
    if (path === '/' && method === 'GET') return sendAsset(req, res, assets.get('index.html')!);
    if (path === '/api/fleet' && method === 'GET') return sendJson(res, 200, snapshot());
    if (path === '/api/terminal' && method === 'GET') return sendJson(res, 200, terminalDetail(url.searchParams.get('key') ?? ''));
    if (path === '/api/command' && method === 'POST') {
      const r = await runCommand(req);
      return sendJson(res, r.status, r.body);
    }
    if (path === '/api/events' && method === 'GET') {
      res.writeHead(200, {
        ...securityHeaders(),
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Accel-Buffering': 'no',
      });
      res.write('retry: 2000\n\n');
      const c: LiveClient = { res, token: sessionOf(req) };
      clients.add(c);
      sseWrite(c, 'snapshot', snapshot());
      req.on('close', () => clients.delete(c));
      return;
    }
    throw fail(404, 'CONSOLE_NOT_FOUND', `nothing at ${path.slice(0, 100)}`);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      const status = (err as { status?: number }).status ?? 500;
      if (status === 500) log.error({ err: toAgentError(err).toJSON() }, 'console request failed');
      sendError(res, status, err);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, onRequest) : createHttpServer(onRequest);
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    clearInterval(flushTimer);
    clearInterval(judgeTimer);
    clearInterval(heartbeat);
    await client.endAsync(true).catch(() => undefined);
    throw new AgentError(
      'CONSOLE_LISTEN',
      `the console cannot listen on ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { host, port },
      { cause: err },
    );
  }
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${secure ? 'https' : 'http'}://${shownHost}:${bound}/`,
    host,
    port: bound,
    commands,
    loginRequired: o.login !== null,
    stop: async () => {
      clearInterval(flushTimer);
      clearInterval(judgeTimer);
      clearInterval(heartbeat);
      for (const c of clients) c.res.end();
      clients.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await client.endAsync().catch(() => undefined);
    },
  };
}

function readTls(t: { cert: string; key: string }): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new AgentError(
        'CONSOLE_TLS_UNREADABLE',
        `cannot read the console's TLS ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { file },
        { cause: err },
      );
    }
  };
  return { cert: read(t.cert, 'certificate'), key: read(t.key, 'key') };
}
