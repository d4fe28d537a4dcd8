/**
 * The biometrics component: opens the encrypted template cache, builds the identifier's 1:N
 * indexes, the extractor (image → template) and the module slot map. Without a template key and
 * without scanners the terminal only delivers punches.
 */
import { AgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { ModuleSlots } from '../../store/module-slots.js';
import { TemplateCache } from '../../store/template-cache.js';
import type { AgentConfig } from '../../config/config.js';
import { Identifier, type ModalityMatcher } from '../../terminal/identifier.js';
import { BadgeMatcher, CredentialHasher } from '../../terminal/credentials.js';
import type { Extractor } from '../../terminal/engines.js';
import { createEmbedder, createEmbeddingMatcher } from '../biometric-engines.js';
import type { DaemonComponent, DaemonContext } from '../daemon.js';
import type { TerminalRuntime } from '../runtime.js';
import { scannerTargets } from './scanners.js';

const log = logger('agent:terminal');

export interface BiometricsDeps {
  createExtractor: (config: AgentConfig) => Promise<Extractor | null>;
  fingerMatcher: (config: AgentConfig) => Promise<ModalityMatcher | null>;
}

export class BiometricsComponent implements DaemonComponent {
  readonly name = 'biometrics';
  readonly #rt: TerminalRuntime;
  readonly #createExtractor: BiometricsDeps['createExtractor'];
  readonly #fingerMatcher: BiometricsDeps['fingerMatcher'];

  constructor(rt: TerminalRuntime, deps: BiometricsDeps) {
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
    const finger = await this.#fingerMatcher(rt.config);
    const embedding = createEmbeddingMatcher(rt.config);
    rt.credentials = new CredentialHasher({ siteKey: rt.secrets.siteKey, templateKey: rt.secrets.templateKey });
    const matchers = [finger, embedding, new BadgeMatcher(rt.credentials)].filter((m): m is NonNullable<typeof m> => m !== null);
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
    rt.credentials = null;
    rt.cache = null;
  }
}

