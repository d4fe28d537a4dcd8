/**
 * The agent's own daemon components, in start order (see components.ts):
 *
 *   biometrics  template cache (encrypted), identifier (1:N indexes), extractor, module slot map
 *   scanners    one worker per scanner: capture → identify → punch → feedback
 *   site-sync   enrolled templates shared with every terminal of the site over MQTT
 *   ops         retained state/info/metrics and the request/response commands
 *   control     the local control socket (enroll and identify from the CLI)
 *
 * They share one TerminalRuntime.
 */
import type { Scanner } from '../../drivers/scanner.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { mqttClientOptions } from './upstreams.js';
import { createOpsRouter } from '../ops/ops-router.js';
import { SiteTemplateSync, type SiteTemplateRecord, type SiteTemplateStore } from '../site-sync/site-sync.js';
import { TerminalOps } from '../ops/terminal-ops.js';
import { ModuleSlots } from '../store/module-slots.js';
import { TemplateCache, type TemplateFormat } from '../store/template-cache.js';
import type { AgentConfig, ScannerConfig } from '../config/config.js';
import type { DaemonComponent, DaemonContext } from './daemon.js';
import { placeModuleTemplates, type ModuleTemplateRef } from '../terminal/module-cache.js';
import { ScannerWorker } from '../terminal/scanner-worker.js';
import type { TerminalRuntime } from './terminal-runtime.js';

const log = logger('agent:terminal');

/** The scanners to run: those of the config, or the simulated pair of the embedded default. */
export function scannerTargets(config: AgentConfig): ScannerConfig[] {
  if (config.scanners.length > 0) return config.scanners;
  if (config.simulate) return [{ family: 'r30x', path: 'sim' }, { family: 'iris-hid', path: 'sim' }];
  return [];
}

export function scannerKey(s: ScannerConfig): string {
  return s.path === 'sim' ? `sim:${s.family}` : `${s.family}:${s.path}`;
}

export class BiometricsComponent implements DaemonComponent {
  readonly name = 'biometrics';
  readonly #rt: TerminalRuntime;
  readonly #createExtractor: (config: AgentConfig) => Promise<TerminalRuntime['extractor']>;
  readonly #fingerMatcher: (config: AgentConfig) => Promise<import('../terminal/identifier.js').ModalityMatcher | null>;

  constructor(rt: TerminalRuntime, deps: { createExtractor: (config: AgentConfig) => Promise<TerminalRuntime['extractor']>; fingerMatcher: (config: AgentConfig) => Promise<import('../terminal/identifier.js').ModalityMatcher | null> }) {
    this.#rt = rt;
    this.#createExtractor = deps.createExtractor;
    this.#fingerMatcher = deps.fingerMatcher;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    rt.ctx = ctx;
    rt.slots = await ModuleSlots.open(ctx.db);
    if (!rt.secrets.templateKey) {
      if (scannerTargets(rt.config).length > 0) {
        throw new AgentError('AGENT_NO_TEMPLATE_KEY', 'scanners are configured but there is no template key to open the template cache', {}, {
          hint: 'run "edge-agent provision" (it generates one) or put templateKey (64 hex characters) in the secrets file',
        });
      }
      log.info('no template key and no scanner: identification is off, the agent only delivers punches');
      return;
    }
    rt.cache = await TemplateCache.open(ctx.db, { key: rt.secrets.templateKey });
    const { Identifier } = await import('../terminal/identifier.js');
    const finger = await this.#fingerMatcher(rt.config);
    const { createEmbedder, createEmbeddingMatcher } = await import('./biometric-engines.js');
    const embedding = createEmbeddingMatcher(rt.config);
    const matchers = [finger, embedding].filter((m): m is NonNullable<typeof m> => m !== null);
    rt.identifier = await Identifier.build(rt.cache, { biometrics: rt.config.biometrics, matchers });
    rt.embedder = createEmbedder(rt.config);
    rt.extractor = await this.#createExtractor(rt.config);
  }

  async stop(): Promise<void> {
    const rt = this.#rt;
    await rt.extractor?.close().catch(() => undefined);
    await rt.identifier?.close().catch(() => undefined);
    rt.extractor = null;
    rt.identifier = null;
    rt.cache = null;
  }
}

/** Every cached module template of one format, the newest per employee. */
export async function moduleTemplatesOf(cache: TemplateCache, format: string): Promise<ModuleTemplateRef[]> {
  const newest = new Map<string, ModuleTemplateRef & { createdAt: string }>();
  for await (const t of cache.listTemplates({ modality: 'finger' })) {
    if (t.format !== format) continue;
    const prev = newest.get(t.employeeCode);
    if (!prev || t.createdAt > prev.createdAt) newest.set(t.employeeCode, { employeeCode: t.employeeCode, templateId: t.id, data: t.data, createdAt: t.createdAt });
  }
  return [...newest.values()].map(({ createdAt: _c, ...r }) => r);
}

export class ScannersComponent implements DaemonComponent {
  readonly name = 'scanners';
  readonly #rt: TerminalRuntime;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async #opener(target: ScannerConfig): Promise<() => Promise<Scanner>> {
    const key = scannerKey(target);
    if (target.path === 'sim') {
      const { createSimulatedScanner } = await import('../../drivers/simulated.js');
      return async () => {
        const { scanner, simulator } = await createSimulatedScanner(target.family, target.baud !== undefined ? { baud: target.baud } : {});
        this.#rt.simulators.set(key, simulator);
        return scanner;
      };
    }
    const { createScanner } = await import('../../drivers/open-scanner.js');
    return () => createScanner({ family: target.family, path: target.path, ...(target.baud !== undefined ? { baud: target.baud } : {}) });
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    for (const target of scannerTargets(rt.config)) {
      const key = scannerKey(target);
      const worker = new ScannerWorker({
        key,
        open: await this.#opener(target),
        identifyImage: (modality, image) => rt.identifyImage(modality, image),
        slotOwner: async (k, slot) => (rt.slots ? rt.slots.owner(k, slot) : null),
        punch: async ({ employeeCode, source, score }) => {
          const r = await ctx.policy.punch({ employeeCode, source, score });
          return r.recorded ? { recorded: true, direction: r.direction } : { recorded: false, reason: `${r.reason}: already recorded ${r.secondsAgo}s ago` };
        },
        onReady: async (scanner, info) => {
          if (!rt.cache || !rt.slots || !scanner.capabilities.moduleSearch) return;
          const cache = rt.cache;
          try {
            await placeModuleTemplates({ scanner, info, scannerKey: key, slots: rt.slots, templatesOfFormat: (format) => moduleTemplatesOf(cache, format) });
          } catch (err) {
            rt.noteError(err);
            log.warn({ scanner: key, err: toAgentError(err).toJSON() }, 'could not place module templates; host matching covers everyone');
          }
        },
      });
      worker.on('capture', (outcome) => {
        rt.noteCapture(outcome);
        const level = outcome.result === 'refused' ? 'error' : 'info';
        log[level]({ scanner: key, result: outcome.result, employeeCode: outcome.employeeCode, path: outcome.path, score: outcome.score, direction: outcome.direction, latencyMs: outcome.latencyMs, detail: outcome.detail }, `capture: ${outcome.result}`);
      });
      worker.on('status', (s) => {
        if (s.status === 'disconnected' && s.error) rt.noteError(new AgentError('AGENT_SCANNER_DISCONNECTED', `${key}: ${s.error}`));
        void rt.ops?.publishInfo();
      });
      rt.workers.set(key, worker);
      worker.start();
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#rt.workers.values()].map((w) => w.stop()));
    this.#rt.workers.clear();
    for (const sim of this.#rt.simulators.values()) await sim.close().catch(() => undefined);
    this.#rt.simulators.clear();
  }
}

/** The template cache as the site sync sees it: one record per person, versioned by (updatedAt, origin). */
export function siteStore(cache: TemplateCache): SiteTemplateStore {
  return {
    async versionOf(employeeCode) {
      const metas = await cache.listTemplateMeta({ employeeCode });
      if (metas.length === 0) return null;
      const newest = metas.reduce((a, b) => (b.version > a.version ? b : a));
      return { updatedAt: new Date(newest.version).toISOString(), origin: newest.sourceTerminal ?? '' };
    },
    async apply(record: SiteTemplateRecord) {
      const version = Date.parse(record.updatedAt);
      await cache.deleteUser(record.employeeCode);
      await cache.upsertUser({ employeeCode: record.employeeCode });
      await cache.addTemplates(
        record.templates.map((t) => ({
          id: t.id,
          employeeCode: record.employeeCode,
          modality: t.modality as 'finger' | 'iris' | 'embedding',
          position: t.position ?? 'unknown',
          format: t.format as TemplateFormat,
          data: Buffer.from(t.data, 'base64'),
          quality: t.quality,
          sensorModel: t.sensorModel,
          createdAt: t.createdAt,
          sourceTerminal: record.origin,
          version,
        })),
      );
    },
    remove: (employeeCode) => cache.deleteUser(employeeCode),
  };
}

/** A person's templates as a site record (after a local enrolment). */
export async function siteRecordOf(cache: TemplateCache, employeeCode: string): Promise<SiteTemplateRecord | null> {
  const templates = [];
  let version = 0;
  let origin = '';
  for await (const t of cache.listTemplates({ employeeCode })) {
    templates.push({ id: t.id, modality: t.modality, position: t.position, format: t.format, quality: t.quality, sensorModel: t.sensorModel, createdAt: t.createdAt, data: Buffer.from(t.data).toString('base64') });
    if (t.version >= version) {
      version = t.version;
      origin = t.sourceTerminal ?? '';
    }
  }
  if (templates.length === 0) return null;
  return { v: 1, employeeCode, updatedAt: new Date(version).toISOString(), origin, templates };
}

export class SiteSyncComponent implements DaemonComponent {
  readonly name = 'site-sync';
  readonly #rt: TerminalRuntime;
  #placeTimer: NodeJS.Timeout | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(): Promise<void> {
    const rt = this.#rt;
    const { config, secrets } = rt;
    if (!config.mqtt.url || !rt.cache) return;
    if (!secrets.siteKey) {
      log.warn('no site key: enrolled templates stay on this terminal (set siteKey in the secrets file to share them with the site)');
      return;
    }
    const sync = new SiteTemplateSync({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, `${config.terminal.id}-sync`),
      prefix: config.mqtt.prefix,
      site: config.terminal.site,
      terminal: config.terminal.id,
      key: secrets.siteKey,
      store: siteStore(rt.cache),
    });
    sync.on('error', ({ error }) => rt.noteError(error));
    // The modules follow the cache: a person received from the site is placed in a slot (after a
    // burst of retained records, once), a person deleted through the site leaves the modules now.
    sync.on('applied', () => {
      if (this.#placeTimer) clearTimeout(this.#placeTimer);
      this.#placeTimer = setTimeout(() => {
        this.#placeTimer = null;
        void refreshModuleTemplates(rt);
      }, 300);
    });
    sync.on('removed', ({ employeeCode }) => void clearPersonFromModules(rt, employeeCode));
    await sync.start();
    rt.siteSync = sync;
  }

  async stop(): Promise<void> {
    if (this.#placeTimer) clearTimeout(this.#placeTimer);
    this.#placeTimer = null;
    await this.#rt.siteSync?.stop();
    this.#rt.siteSync = null;
  }
}

export interface OpsHooks {
  reloadConfig(): Promise<unknown>;
  restart(): void;
}

/** Places the cached module templates again on every ready module (the cache changed under them). */
export async function refreshModuleTemplates(rt: TerminalRuntime): Promise<void> {
  const { cache, slots } = rt;
  if (!cache || !slots) return;
  for (const worker of rt.workers.values()) {
    const info = worker.info;
    if (worker.status !== 'ready' || !info?.moduleTemplateFormat) continue;
    try {
      await worker.withScanner(async (scanner) => (scanner.capabilities.moduleSearch ? placeModuleTemplates({ scanner, info, scannerKey: worker.key, slots, templatesOfFormat: (format) => moduleTemplatesOf(cache, format) }) : null));
    } catch (err) {
      rt.noteError(err);
      log.warn({ scanner: worker.key, err: toAgentError(err).toJSON() }, 'could not place module templates after a site change; placed again at the next reconnection');
    }
  }
}

/** Takes a person's templates off this terminal's modules; resolves to the slots cleared. */
export async function clearPersonFromModules(rt: TerminalRuntime, employeeCode: string): Promise<number> {
  let moduleSlots = 0;
  if (!rt.slots) return 0;
  for (const { scannerKey: key, slot } of await rt.slots.slotsOf(employeeCode)) {
    const worker = rt.workers.get(key);
    try {
      if (worker) await worker.withScanner((s) => s.deleteOnModule(slot));
      moduleSlots++;
    } catch (err) {
      log.warn({ scanner: key, slot, err: toAgentError(err).toJSON() }, 'could not delete the template from the module now; it is forgotten and overwritten at the next placement');
    }
    await rt.slots.release(key, slot);
  }
  return moduleSlots;
}

/** Deletes a person's templates here, on this terminal's modules and across the site. */
export async function deletePersonTemplates(rt: TerminalRuntime, employeeCode: string): Promise<Record<string, unknown>> {
  const moduleSlots = await clearPersonFromModules(rt, employeeCode);
  const templatesRemoved = rt.cache ? await rt.cache.deleteUser(employeeCode) : 0;
  let site = false;
  if (rt.siteSync) {
    await rt.siteSync.publishDeletion(employeeCode);
    site = true;
  }
  log.info({ employeeCode, templatesRemoved, moduleSlots, site }, 'person\'s templates deleted');
  return { employeeCode, templatesRemoved, moduleSlotsCleared: moduleSlots, deletedAcrossSite: site };
}

export class OpsComponent implements DaemonComponent {
  readonly name = 'ops';
  readonly #rt: TerminalRuntime;
  readonly #hooks: OpsHooks;

  constructor(rt: TerminalRuntime, hooks: OpsHooks) {
    this.#rt = rt;
    this.#hooks = hooks;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    const { config, secrets } = rt;
    ctx.uploader.on('error', ({ sink, error }) => rt.noteError(new AgentError(error.code, `${sink}: ${error.message}`)));
    ctx.uploader.on('dead', ({ sink, id, status, description }) => rt.noteError(new AgentError('UPLOAD_DEAD_LETTER', `${sink}: ${id} ${status} ${description}`)));
    if (!config.mqtt.url || !config.ops.enabled) return;
    const router = createOpsRouter({
      terminal: config.terminal.id,
      info: () => rt.info(),
      queueStatus: () => ctx.outbox.status(),
      retryDead: (ids) => ctx.outbox.retryDead(ids),
      syncTemplates: async () => {
        if (!rt.siteSync) throw new AgentError('OPS_SYNC_OFF', 'site template sync is off on this terminal', {}, { hint: 'it needs mqtt.url, a template key and a site key' });
        await rt.siteSync.resync();
        return { resubscribed: true, counters: rt.siteSync.counters };
      },
      reloadConfig: () => this.#hooks.reloadConfig(),
      deleteUser: (code) => deletePersonTemplates(rt, code),
      restart: () => this.#hooks.restart(),
    });
    const ops = new TerminalOps({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, `${config.terminal.id}-ops`),
      base: { prefix: config.mqtt.prefix, site: config.terminal.site, terminal: config.terminal.id },
      info: () => rt.info(),
      metrics: () => rt.metrics(),
      metricsIntervalMs: config.ops.metricsIntervalSec * 1000,
      router,
    });
    await ops.start(1500);
    rt.ops = ops;
  }

  async stop(): Promise<void> {
    await this.#rt.ops?.stop();
    this.#rt.ops = null;
  }
}

export class ControlComponent implements DaemonComponent {
  readonly name = 'control';
  readonly #rt: TerminalRuntime;
  #server: import('./control-socket.js').ControlServer | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(): Promise<void> {
    const rt = this.#rt;
    const { ControlServer, controlSocketPath } = await import('./control-socket.js');
    const { enroll, identifyOnce } = await import('../terminal/enroller.js');
    const { createAttendanceClient } = await import('./upstreams.js');
    const client = rt.config.api.url && rt.secrets.apiKey && rt.secrets.apiSecret ? createAttendanceClient(rt.config, rt.secrets) : null;
    const modality = (v: unknown) => (v === 'iris' ? 'iris' : 'finger') as 'finger' | 'iris';
    const server = new ControlServer(controlSocketPath(rt.config.dataDir))
      .handle('ping', async () => ({ pong: true, terminal: rt.config.terminal.id }))
      .handle('status', async () => ({ info: await rt.info(), metrics: await rt.metrics() }))
      .handle('enroll', (body, progress) =>
        enroll(rt, client, {
          employeeCode: String(body.employeeCode ?? ''),
          modality: modality(body.modality),
          position: typeof body.position === 'string' ? body.position : modality(body.modality) === 'iris' ? 'right' : 'right-index',
          ...(typeof body.captures === 'number' ? { captures: body.captures } : {}),
          ...(typeof body.minQuality === 'number' ? { minQuality: body.minQuality } : {}),
        }, progress, typeof body.scanner === 'string' ? body.scanner : undefined),
      )
      .handle('identify', (body, progress) => identifyOnce(rt, modality(body.modality), progress, typeof body.scanner === 'string' ? body.scanner : undefined))
      .handle('delete-user', (body) => deletePersonTemplates(rt, String(body.employeeCode ?? '')));
    await server.start();
    this.#server = server;
  }

  async stop(): Promise<void> {
    await this.#server?.stop();
    this.#server = null;
  }
}
