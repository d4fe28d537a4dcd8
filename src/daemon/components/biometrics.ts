/**
 * The biometrics component: opens the encrypted template cache, builds the identifier's 1:N
 * indexes over the matchers of src/biometrics/matchers/ and the badge matcher (from the
 * encrypted index snapshot `<dataDir>/index-snapshot.bin` when it fits, else from the cache, then
 * writes one), the extractor and the embedding slot's model (image → template, loading its models in its
 * own thread meanwhile) and the module slot map. Every ten minutes a new snapshot is written when
 * a thousand template changes piled up. Without a template key and without scanners the terminal
 * only delivers punches.
 *
 * Tested in test/integration/identify-template.test.ts (the running agent loads the index snapshot
 * and identifies) and test/integration/agent-e2e.test.ts (a finger on a pty module identified and
 * punched).
 */
import { AgentError, toAgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { ModuleSlots } from '../../store/module-slots.js';
import { TemplateCache } from '../../store/template-cache.js';
import { indexSnapshotPath } from '../../store/index-snapshot.js';
import { EmbeddingMatcher } from '../../biometrics/matchers/embedding-matcher.js';
import { FingerMatcher } from '../../biometrics/matchers/finger-matcher.js';
import { Identifier } from '../../terminal/identifier.js';
import { BadgeMatcher, CredentialHasher } from '../../terminal/credentials.js';
import { createEmbedder, createExtractor } from '../../terminal/engines.js';
import type { DaemonComponent, DaemonContext } from '../component.js';
import type { TerminalRuntime } from '../runtime.js';
import { scannerTargets } from './scanners.js';

const log = logger('agent:terminal');
/** How often the daemon looks whether enough template changes piled up for a new index snapshot. */
const SNAPSHOT_CHECK_MS = 10 * 60_000;

export class BiometricsComponent implements DaemonComponent {
  readonly name = 'biometrics';
  readonly #rt: TerminalRuntime;
  #timer: NodeJS.Timeout | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    rt.ctx = ctx;
    rt.slots = await ModuleSlots.open(ctx.db);
    if (!rt.secrets.templateKey) {
      if (scannerTargets(rt.config).length > 0) {
        throw new AgentError(
          'AGENT_NO_TEMPLATE_KEY',
          'scanners are configured but there is no template key to open the template cache',
          {},
          {
            hint: 'run "edge-agent provision" (it generates one) or put templateKey (64 hex characters) in the secrets file',
          },
        );
      }
      log.info('no template key and no scanner: identification is off, the agent only delivers punches');
      return;
    }
    rt.cache = await TemplateCache.open(ctx.db, { key: rt.secrets.templateKey });
    const { biometrics } = rt.config;
    rt.credentials = new CredentialHasher({ siteKey: rt.secrets.siteKey, templateKey: rt.secrets.templateKey });
    // The iris matcher is the identifier's own; the embedding slot's only with a model configured.
    const matchers = [
      new FingerMatcher(biometrics.fingerThreshold, { secondFinger: rt.config.policy.secondFinger === 'on' }),
      ...(biometrics.embedding ? [new EmbeddingMatcher(biometrics.embedding.threshold)] : []),
      new BadgeMatcher(rt.credentials),
    ];
    // The extractor loads its models in its own thread while the indexes load here.
    const extractor = createExtractor();
    try {
      rt.identifier = await Identifier.build(rt.cache, {
        biometrics,
        matchers,
        snapshot: { path: indexSnapshotPath(rt.config.dataDir), templateKey: rt.secrets.templateKey },
      });
      // Built from the cache (the first start, or a snapshot that did not fit): write one now, so
      // the next start loads it.
      if (rt.identifier.snapshotDue) await this.#saveSnapshot();
    } finally {
      rt.extractor = await extractor;
    }
    rt.embedder = createEmbedder(biometrics.embedding);
    this.#timer = setInterval(() => {
      if (rt.identifier?.snapshotDue) void this.#saveSnapshot();
    }, SNAPSHOT_CHECK_MS);
    this.#timer.unref();
  }

  async #saveSnapshot(): Promise<void> {
    try {
      await this.#rt.identifier?.saveSnapshot();
    } catch (err) {
      log.warn(
        { err: toAgentError(err).toJSON() },
        'the identification index snapshot could not be written: the next start builds the indexes from the cache',
      );
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    const rt = this.#rt;
    await rt.extractor?.close().catch(() => undefined);
    await rt.identifier?.close().catch(() => undefined);
    rt.extractor = null;
    rt.identifier = null;
    rt.credentials = null;
    rt.cache = null;
  }
}
