/**
 * Tested in test/integration/agent-enroll.test.ts (a full enrolment, refusals, through the running
 * agent), test/integration/enroll-busy-scanner.test.ts, test/integration/agent-badge-e2e.test.ts and
 * test/integration/several-fingers.test.ts (--fingers, a repeated finger refused).
 */
import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, usageError, withJson } from '../command.js';
import { withCommonOptions, withScannerOptions, type CommonValues, type ScannerValues } from '../common-options.js';
import type { EnrollResult } from '../../terminal/enroller.js';
import { logForPeople } from '../log-options.js';

function printResult(r: EnrollResult, apiConfigured: boolean): void {
  const who = r.name ? `${r.employeeCode} (${r.name})` : r.employeeCode;
  const positions = r.positions ?? [r.position];
  process.stdout.write(`enrolled ${who}: ${r.modality} ${positions.join(', ')}, ${r.templates.length} template(s) stored\n`);
  // Several fingers: which finger was stored, with how many templates.
  if (positions.length > 1)
    for (const p of positions) process.stdout.write(`  ${p}: ${r.templates.filter((t) => t.position === p).length} template(s) stored\n`);
  if (r.moduleError)
    process.stdout.write(`  not on the module: ${r.moduleError} (identified from the captures; enrol again to put it on the module)\n`);
  // Each item's outcome was printed as it came (progress); here the tally.
  if (r.upload)
    process.stdout.write(
      `  upload: ${r.upload.filter((u) => u.statusCode === 'SUCCESS').length} of ${r.upload.length} item(s) accepted by the attendance service\n`,
    );
  else if (r.uploadError)
    process.stdout.write(`  upload failed: ${r.uploadError} (the templates are enrolled here; enrol again to repeat the upload)\n`);
  else if (r.modality === 'badge')
    process.stdout.write('  not uploaded: a badge stays with the terminals of the site (the service keeps no badges)\n');
  else
    process.stdout.write(
      apiConfigured
        ? '  not uploaded: only a module template was taken (vendor format; the service takes templates from image captures)\n'
        : '  not uploaded: no attendance API configured\n',
    );
  process.stdout.write(
    `  site: ${r.publishedToSite ? 'published to every terminal of the site' : 'not published (no MQTT broker or site key)'}\n`,
  );
}

type Values = CommonValues &
  ScannerValues & {
    modality?: string;
    position?: string;
    fingers?: string;
    present?: string;
    captures?: string;
    'min-quality'?: string;
    json?: boolean;
  };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'enroll [code]',
    summary: "enroll an employee's finger, iris or badge (captures, quality gate, duplicate check, upload, site)",
    audience: 'technician',
    details: `Enrolls employee CODE: checks the person exists in the attendance service, takes the captures
through the quality gate, refuses a finger or eye already enrolled to someone else, stores the
templates (encrypted) here, uploads them to the service (each item's outcome is shown) and
publishes them to the site. With --fingers N (or --position naming several fingers) it enrols
N different fingers one after the other, each its own templates of the person at its position
(identification then uses all of them); a press of a finger already taken in this enrolment is
refused and asked again. Every press is prompted with the total ("press 2 of 5: place the
same finger again", "lift your finger"); a press not taken is asked again (three tries a
press), keeping the ones before it. Runs through the agent's control socket when the agent
runs on this data folder (it holds the scanners), else opens the scanners in this process; a
scanner another process holds (an agent of another configuration) is refused at once, naming
that process.
With --modality badge it reads one card on the badge reader and stores its keyed hash (never
the number): the fallback for a person who cannot enroll a finger or an eye.`,
  })
    .option('--modality <modality>', 'what to enroll: finger, iris or badge (default finger)')
    .option(
      '--position <position>',
      'finger position (default right-index), eye (left, right; default right) or badge label (default badge); for several fingers a comma-separated list, e.g. right-index,left-index',
    )
    .option(
      '--fingers <n>',
      'fingers to enrol, each a different one (default 1, or as many as --position names); those not named follow right-index, right-middle, left-index, left-middle, right-thumb, left-thumb, ...',
    )
    .option(
      '--present <id>',
      'with a simulated scanner in this process: virtual finger (or eye) ID is presented and lifted whenever the enrollment asks for it (several fingers: a comma-separated ID per finger); for a badge, the card number',
    )
    .option(
      '--captures <n>',
      'image captures to take (default 3); a fingerprint module adds its own presses (R30x 2, GT-521 3), and the total is announced first',
    )
    .option('--min-quality <n>', 'quality gate 0..100 (default 40)');
  withJson(cmd, 'print the result as one JSON object (progress goes to stderr)');
  withScannerOptions(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values, positionals) => {
    // For a person: the agent parts started here log warnings only, as readable lines (log-options.ts).
    await logForPeople();
    const { AgentError } = await import('../../core/errors.js');
    const { configForFlags, secretsFor } = await import('../../config/load.js');
    const { applyScannerFlags, withTerminal } = await import('../terminal-session.js');
    const { describeProgress, modalityFlag, simulatedPerson } = await import('../enroll-session.js');
    const { defaultPosition, enrolPositions, MAX_FINGERS } = await import('../../terminal/enroller.js');
    const employeeCode = positionals[0]?.trim();
    if (!employeeCode) throw usageError('enroll', 'name one employee code: edge-agent enroll CODE');
    const modality = modalityFlag(values.modality);
    const named = (values.position ?? defaultPosition(modality)).split(',').map((p) => p.trim());
    const fingers = intFlag('fingers', values.fingers);
    if (fingers !== undefined && modality !== 'finger')
      throw usageError('enroll', '--fingers is for fingers (an eye or a badge is enrolled one at a time)');
    if (named.length > 1 && modality !== 'finger') throw usageError('enroll', 'one --position for an eye or a badge');
    if (fingers !== undefined && (fingers < 1 || fingers > MAX_FINGERS))
      throw usageError('enroll', `--fingers takes 1..${MAX_FINGERS}`, { fingers });
    let positions: string[];
    try {
      positions = enrolPositions(modality, named, fingers);
    } catch (err) {
      throw usageError('enroll', (err as Error).message, { positions: named });
    }
    const position = positions[0]!;
    const captures = intFlag('captures', values.captures);
    const minQuality = intFlag('min-quality', values['min-quality']);
    if (captures !== undefined && (captures < 1 || captures > 10)) throw usageError('enroll', '--captures takes 1..10', { captures });
    if (minQuality !== undefined && (minQuality < 0 || minQuality > 100))
      throw usageError('enroll', '--min-quality takes 0..100', { minQuality });
    const presentIds = values.present === undefined ? undefined : values.present.split(',').map((id) => intFlag('present', id)!);
    if (presentIds && presentIds.length > 1 && presentIds.length !== positions.length)
      throw usageError('enroll', `--present names ${presentIds.length} IDs for ${positions.length} finger(s): one ID, or one per finger`);
    const config = applyScannerFlags(configForFlags(values, process.env, { command: 'edge-agent enroll' }), values);
    const secrets = secretsFor(config, values);
    const json = values.json === true;
    // On a terminal a bar counts the captures (below the step lines); otherwise just the lines.
    const { progress } = await import('../progress.js');
    const bar = progress('presses', { unit: 'presses', everyMs: 0 });
    const show = (e: Record<string, unknown>) => {
      bar.say(describeProgress(e), json ? process.stderr : process.stdout);
      const taken = e.step === 'captured' || (e.step === 'module' && e.read === true);
      if (taken && typeof e.press === 'number' && typeof e.presses === 'number') bar.update(e.press, e.presses);
      if (e.step === 'captures-done') bar.finish();
    };
    const say = (line: string) => bar.say(line, json ? process.stderr : process.stdout);
    const body = {
      employeeCode,
      modality,
      position,
      ...(positions.length > 1 ? { positions } : {}),
      ...(captures !== undefined ? { captures } : {}),
      ...(minQuality !== undefined ? { minQuality } : {}),
    };

    let result: EnrollResult;
    try {
      result = await withTerminal<EnrollResult>(
        config,
        secrets,
        async (call) => {
          if (presentIds !== undefined) {
            throw new AgentError(
              'CLI_USAGE',
              '--present works with simulated scanners opened by this command; the agent runs on this data folder and holds its scanners',
              {},
              { hint: "present the finger on the running agent's scanner, or stop the agent" },
            );
          }
          say(`enrolling ${employeeCode} through the running agent`);
          return (await call('enroll', body, show)) as EnrollResult;
        },
        async (rt) => {
          const { enroll } = await import('../../terminal/enroller.js');
          const { createAttendanceClient } = await import('../../daemon/upstreams.js');
          const client = config.api.url && secrets.apiKey && secrets.apiSecret ? createAttendanceClient(config, secrets) : null;
          let person: Awaited<ReturnType<typeof simulatedPerson>> | null = null;
          if (presentIds !== undefined) person = simulatedPerson(rt, modality, presentIds);
          try {
            return await enroll(
              rt,
              client,
              {
                employeeCode,
                modality,
                position,
                ...(positions.length > 1 ? { positions } : {}),
                ...(captures !== undefined ? { captures } : {}),
                ...(minQuality !== undefined ? { minQuality } : {}),
              },
              (e) => {
                show(e);
                person?.onProgress(e);
              },
            );
          } finally {
            await person?.stop();
          }
        },
      );
    } finally {
      bar.finish();
    }
    if (json) printJson(result);
    else printResult(result, config.api.url !== null);
    return 0;
  });
}
