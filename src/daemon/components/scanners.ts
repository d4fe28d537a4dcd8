/**
 * The scanners component: one worker per scanner (src/terminal/scanner-worker.ts: capture →
 * recognizer → punch step → feedback), the module templates placed on each module that keeps its
 * own, simulated scanners where asked, and each capture's outcome noted and logged.
 *
 * Tested in test/integration/agent-e2e.test.ts (a finger on the pty module becomes one event;
 * unplugged and plugged back it punches again) and test/integration/agent-badge-e2e.test.ts.
 */
import type { Scanner } from '../../../drivers/scanner.js';
import { AgentError, toAgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import type { AgentConfig, ScannerConfig } from '../../config/config.js';
import { moduleTemplatesOf, placeModuleTemplates } from '../../terminal/module-cache.js';
import { PunchStep } from '../../terminal/punch-step.js';
import { Recognizer } from '../../terminal/recognizer.js';
import { ScannerWorker } from '../../terminal/scanner-worker.js';
import { secondFingerPolicy } from '../../terminal/second-finger.js';
import type { DaemonComponent, DaemonContext } from '../component.js';
import type { TerminalRuntime } from '../runtime.js';

const log = logger('agent:terminal');

/** The scanners to run: those of the config, or the simulated pair of the embedded default. */
export function scannerTargets(config: AgentConfig): ScannerConfig[] {
  if (config.scanners.length > 0) return config.scanners;
  if (config.simulate)
    return [
      { family: 'r30x', path: 'sim' },
      { family: 'iris-hid', path: 'sim' },
    ];
  return [];
}

export function scannerKey(s: ScannerConfig): string {
  return s.path === 'sim' ? `sim:${s.family}` : `${s.family}:${s.path}`;
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
      const { createSimulatedScanner } = await import('../../../drivers/simulated.js');
      const { syntheticImages } = await import('../../synthetic/simulator-sources.js');
      return async () => {
        const { scanner, simulator } = await createSimulatedScanner(target.family, {
          images: syntheticImages,
          ...(target.baud !== undefined ? { baud: target.baud } : {}),
          ...(target.format !== undefined ? { format: target.format } : {}),
        });
        this.#rt.simulators.set(key, simulator);
        return scanner;
      };
    }
    const { createScanner } = await import('../../../drivers/open-scanner.js');
    return () =>
      createScanner({
        family: target.family,
        path: target.path,
        ...(target.baud !== undefined ? { baud: target.baud } : {}),
        ...(target.format !== undefined ? { format: target.format } : {}),
      });
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    const { familyEntry } = await import('../../../drivers/families.js');
    // One recognizer over the runtime's engines and one punch step over the daemon's policy, shared by every worker.
    const recognizer = new Recognizer(rt);
    const punch = new PunchStep(ctx.policy);
    for (const target of scannerTargets(rt.config)) {
      const key = scannerKey(target);
      const worker = new ScannerWorker({
        key,
        modality: familyEntry(target.family).modality,
        open: await this.#opener(target),
        recognizer,
        punch,
        secondFinger: secondFingerPolicy(rt.config),
        // A card reader without a light: the terminal's other scanners show the outcome.
        fallbackFeedback: async (kind) => {
          await Promise.all([...rt.workers.values()].filter((w) => w.key !== key).map((w) => w.feedbackIfAble(kind)));
        },
        onReady: async (scanner, info) => {
          if (!rt.cache || !rt.slots || !scanner.capabilities.moduleSearch) return;
          const cache = rt.cache;
          try {
            await placeModuleTemplates({
              scanner,
              info,
              scannerKey: key,
              slots: rt.slots,
              templatesOfFormat: (format) => moduleTemplatesOf(cache, format),
            });
            rt.resolve(`modules:${key}`);
          } catch (err) {
            rt.noteError(err, `modules:${key}`);
            log.warn({ scanner: key, err: toAgentError(err).toJSON() }, 'could not place module templates; host matching covers everyone');
          }
        },
      });
      worker.on('capture', (outcome) => {
        rt.noteCapture(outcome);
        const level = outcome.result === 'refused' ? 'error' : 'info';
        // The badge's number is never logged: a badge outcome names the person, never the card.
        log[level](
          {
            scanner: key,
            result: outcome.result,
            employeeCode: outcome.employeeCode,
            path: outcome.path,
            score: outcome.score,
            needed: outcome.needed,
            direction: outcome.direction,
            latencyMs: outcome.latencyMs,
            detail: outcome.detail,
          },
          `capture: ${outcome.result}`,
        );
      });
      worker.on('status', (s) => {
        // The scanner's error holds until it is ready again.
        if (s.status === 'disconnected' && s.error)
          rt.noteError(new AgentError('AGENT_SCANNER_DISCONNECTED', `${key}: ${s.error}`), `scanner:${key}`);
        else if (s.status === 'ready') rt.resolve(`scanner:${key}`);
        void rt.ops?.publishInfo();
        void rt.ops?.publishMetrics(); // the fleet sees a scanner go (degraded) and come back at once
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
