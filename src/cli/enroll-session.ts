/**
 * What `enroll` and `identify` share on the command line: the `--modality` flag, one readable
 * line per progress event of the enrolment (or identification), and the simulated person of
 * `--present ID`, who presents a virtual finger or eye whenever the enrolment asks for a press and
 * lifts it when asked to (the way a person follows the terminal's prompts).
 */
import type { ScannerModality } from '../core/modality.js';
import type { SimulatorControl } from '../../drivers/simulated.js';
import { AgentError } from '../core/errors.js';
import type { TerminalRuntime } from '../daemon/runtime.js';

export function modalityFlag(value: string | undefined): ScannerModality {
  if (value === undefined || value === 'finger') return 'finger';
  if (value === 'iris' || value === 'badge') return value;
  throw new AgentError('CLI_USAGE', `--modality takes finger, iris or badge, got "${value}"`, { modality: value });
}

/** One line for a progress event of the enroller or identifyOnce. */
export function describeProgress(e: Record<string, unknown>): string {
  const step = String(e.step ?? '');
  switch (step) {
    case 'captured':
      return `  ${e.position ? `${String(e.position)}: ` : ''}capture ${String(e.capture)}/${String(e.of)} taken (quality ${String(e.quality)})`;
    case 'upload':
      if (e.error) return `  upload failed: ${String(e.error)}${e.message ? ` (${String(e.message)})` : ''}`;
      if (e.item === undefined) return `  ${String(e.message ?? 'upload')}`;
      return `  upload item ${String(e.item)}: ${String(e.statusCode)}${e.statusDescription ? ` (${String(e.statusDescription)})` : ''}`;
    case 'stored':
      return `  stored ${String(e.templates)} template(s) in the encrypted cache`;
    case 'module':
      if (e.read === true)
        return `  press ${String(e.press)} of ${String(e.presses)} read by the module (${String(e.modulePress)}/${String(e.of)})`;
      return `  ${String(e.message ?? 'enrolling on the module')}`;
    default:
      return `  ${typeof e.message === 'string' ? e.message : JSON.stringify(e)}`;
  }
}

export interface SimulatedPerson {
  onProgress(e: Record<string, unknown>): void;
  stop(): Promise<void>;
}

/** The person in front of a simulated scanner of this process (`--present ID`). */
export function simulatedPerson(
  rt: TerminalRuntime,
  modality: ScannerModality,
  id: number | readonly number[],
  options: { holdMs?: number } = {},
): SimulatedPerson {
  const sim: SimulatorControl | undefined = [...rt.simulators.values()].find((s) => s.modality === modality);
  if (!sim) {
    throw new AgentError(
      'CLI_USAGE',
      `--present needs a simulated ${modality} scanner in this process`,
      { modality },
      { hint: 'add --simulate (or --scanner r30x:sim, --scanner iris-hid:sim, --scanner badge-serial:sim)' },
    );
  }
  // Several fingers: one virtual finger per finger of the enrolment, the next one at each 'finger' step.
  const ids = typeof id === 'number' ? [id] : id;
  let current = ids[0]!;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  return {
    onProgress(e) {
      switch (e.step) {
        case 'finger':
          current = ids[Math.min(ids.length, Number(e.finger)) - 1] ?? current;
          break;
        case 'second-finger':
          // Asked for another finger (identify): the next ID, once the first is lifted, held a while.
          if (Array.isArray(e.between) && ids.indexOf(current) + 1 < ids.length) {
            const next = ids[ids.indexOf(current) + 1]!;
            current = next;
            later((options.holdMs ?? 0) + 500, () => {
              sim.present(next);
              later(3000, () => sim.lift());
            });
          }
          break;
        case 'capture':
          sim.present(current);
          // Without a later prompt to lift on (identify), the person lifts after a moment.
          if (options.holdMs !== undefined) later(options.holdMs, () => sim.lift());
          break;
        case 'lift':
          sim.lift();
          break;
        case 'module':
          // Pressed when the module asks (a moment after the prompt, as a person does).
          if (e.action === 'place' || e.action === 'again') later(150, () => sim.present(current));
          break;
        default:
          break;
      }
    },
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      sim.lift();
    },
  };
}
