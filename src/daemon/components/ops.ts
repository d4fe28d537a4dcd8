/**
 * The ops component: retained state, info and metrics over MQTT and the request/response
 * commands (signed; those accepted are remembered in the terminal's database against replays);
 * it also notes delivery errors and dead letters as the terminal's last error, and republishes
 * the metrics at once when the time authority sees a step or a change of trust.
 *
 * Tested in test/integration/agent-ops.test.ts (retained state and metrics, signed commands
 * answered, a captured restart replayed after the restart and into a new process, degraded and
 * healthy again, offline on a clean stop).
 */
import { AgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { keyringOf, OpsAuthenticator } from '../../ops/ops-auth.js';
import { createOpsRouter } from '../../ops/ops-router.js';
import { TerminalOps } from '../../ops/terminal-ops.js';
import { ReplayStore } from '../../store/replay-store.js';
import type { DaemonComponent, DaemonContext } from '../component.js';
import { deletePersonTemplates } from '../people.js';
import type { TerminalRuntime } from '../runtime.js';
import { mqttClientOptions } from '../upstreams.js';

const log = logger('ops:terminal');

export interface OpsHooks {
  reloadConfig(): Promise<unknown>;
  restart(): void;
}

export class OpsComponent implements DaemonComponent {
  readonly name = 'ops';
  readonly #rt: TerminalRuntime;
  readonly #hooks: OpsHooks;
  #off: (() => void) | null = null;

  constructor(rt: TerminalRuntime, hooks: OpsHooks) {
    this.#rt = rt;
    this.#hooks = hooks;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    const { config, secrets } = rt;
    // A delivery error holds until that upstream takes a punch again; dead letters until none is left.
    ctx.uploader.on('error', ({ sink, error }) => rt.noteError(new AgentError(error.code, `${sink}: ${error.message}`), `upload:${sink}`));
    ctx.uploader.on('delivered', ({ sink }) => rt.resolve(`upload:${sink}`));
    ctx.uploader.on('dead', ({ sink, id, status, description }) =>
      rt.noteError(new AgentError('UPLOAD_DEAD_LETTER', `${sink}: ${id} ${status} ${description}`), 'dead-letters'),
    );
    if (!config.mqtt.url || !config.ops.enabled) return;
    const keyring = keyringOf(secrets);
    if (keyring.ids.length === 0)
      log.warn(
        'no ops key in the secrets: every MQTT command is refused (OPS_UNAUTHENTICATED); set opsKey with edge-agent provision --ops-key-file',
      );
    // What was accepted is remembered in the terminal's database: a captured command replayed
    // after a restart (the one a `restart` causes included) is refused.
    const verifier = await OpsAuthenticator.open({
      site: config.terminal.site,
      terminal: config.terminal.id,
      keyring,
      windowMs: config.ops.authWindowSec * 1000,
      ledger: await ReplayStore.open(ctx.db),
    });
    const router = createOpsRouter(
      {
        terminal: config.terminal.id,
        info: () => rt.info(),
        queueStatus: () => ctx.outbox.status(),
        queueList: (o) => ctx.outbox.list(o),
        retryDead: (ids) => ctx.outbox.retryDead(ids),
        syncTemplates: async () => {
          if (!rt.siteSync)
            throw new AgentError(
              'OPS_SYNC_OFF',
              'site template sync is off on this terminal',
              {},
              { hint: 'it needs mqtt.url, a template key and a site key' },
            );
          await rt.siteSync.resync();
          return { resubscribed: true, counters: rt.siteSync.counters };
        },
        reloadConfig: () => this.#hooks.reloadConfig(),
        deleteUser: (code) => deletePersonTemplates(rt, code),
        restart: () => this.#hooks.restart(),
      },
      verifier,
    );
    const ops = new TerminalOps({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, `${config.terminal.id}-ops`),
      base: { prefix: config.mqtt.prefix, site: config.terminal.site, terminal: config.terminal.id },
      info: () => rt.info(),
      metrics: () => rt.metrics(),
      metricsIntervalMs: config.ops.metricsIntervalSec * 1000,
      router,
      maxPayloadBytes: config.mqtt.maxPayloadBytes,
    });
    // Known to the others before it connects: a scanner that becomes ready while the first
    // info is gathered asks for another, which goes after it (TerminalOps publishes a leaf in
    // order). Set after the start, that ask was lost and the fleet saw "connecting" until the
    // next metrics. Before the connection a publish is a no-op; the connection publishes anew.
    rt.ops = ops;
    // A step or a change of trust: the metrics now, not at the next interval.
    const publish = () => void rt.ops?.publishMetrics();
    ctx.time.on('step', publish).on('change', publish);
    this.#off = () => ctx.time.off('step', publish).off('change', publish);
    await ops.start(1500);
  }

  async stop(): Promise<void> {
    this.#off?.();
    this.#off = null;
    await this.#rt.ops?.stop();
    this.#rt.ops = null;
  }
}
