/**
 * `npm run bench:scale -- [--json] [--punches N] [--only drain|templates] [--fingers N] [--irises N] [--searches N] [--tsx]`
 *
 * A terminal at full size, two sections:
 * - drain (scale-drain.ts): a 1,000,000-punch backlog with 10 % dead letters and 1 % answered
 *   ERROR, imported with `punch --import` and drained by the real `run` to the real service.
 * - templates (scale-templates.ts): `run` with 10,000 finger templates and 100,000 iris codes in
 *   its encrypted cache: start to ready, RSS, 1,000 identifications of each modality.
 *
 * Prints one JSON object: the figures, the floors and the ratio of each figure to its floor
 * (above 1 is better than the floor), with the load average before and after (the machine is
 * shared). Never a pass/fail test.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { setLogLevel } from '../../src/core/logger.js';
import { agentCli } from './built-cli.js';
import { benchDrain } from './scale-drain.js';
import { benchTemplates } from './scale-templates.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    punches: { type: 'string' },
    only: { type: 'string' },
    fingers: { type: 'string' },
    irises: { type: 'string' },
    searches: { type: 'string' },
    tsx: { type: 'boolean', default: false },
  },
  strict: true,
});
setLogLevel('*', 'warn');
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);
const out: Record<string, unknown> = { benchmark: 'scale', loadAverageBefore: load(), cpus: cpus().length, node: process.version };
const cli = agentCli({ sources: values.tsx, log });
out.runtime = cli.runtime;
if (values.only !== 'templates') out.drain = await benchDrain({ ...(values.punches ? { punches: Number(values.punches) } : {}), cli, log });
if (values.only !== 'drain') {
  out.templates = await benchTemplates({
    ...(values.fingers ? { fingers: Number(values.fingers) } : {}),
    ...(values.irises ? { irises: Number(values.irises) } : {}),
    ...(values.searches ? { searches: Number(values.searches) } : {}),
    cli,
    log,
  });
}
out.loadAverageAfter = load();
process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
