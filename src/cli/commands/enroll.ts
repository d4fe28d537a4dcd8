import type { Command } from '../command.js';
import { intFlag, parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { COMMON_FLAGS } from '../../config/config.js';
import { configForFlags, secretsFor } from '../../config/load.js';
import type { EnrollResult } from '../../terminal/enroller.js';
import { applyScannerFlags, SCANNER_FLAGS, withTerminal } from '../terminal-session.js';
import { describeProgress, modalityFlag, simulatedPerson, type SimulatedPerson } from '../enrol-session.js';

const usage = `usage: edge-agent enroll CODE [--modality finger|iris] [--position P] [options]
  Enrols employee CODE: checks the person exists in the attendance service, takes three captures
  through the quality gate, refuses a finger or eye already enrolled to someone else, stores the
  templates (encrypted) here, uploads them to the service (each item's outcome is shown) and
  publishes them to the site. Runs through the agent's control socket when the agent runs on this
  data folder (it holds the scanners), else opens the scanners in this process.

  --modality finger|iris  what to enrol (default finger)
  --position P            finger position (default right-index) or eye (left, right; default right)
  --scanner F:PATH[:BAUD] the scanner to use (see "edge-agent run"); PATH "sim" for a simulator
  --simulate              simulated scanners (an R30x module and an iris camera)
  --present ID            with a simulated scanner in this process: virtual finger (or eye) ID is
                          presented and lifted whenever the enrolment asks for it
  --captures N            captures to take (default 3)
  --min-quality N         quality gate 0..100 (default 40)
  --json                  print the result as one JSON object (progress goes to stderr)
  --config FILE, --data DIR, --api URL, --api-key K, --api-secret-file FILE, ... as for "edge-agent run"`;

function printResult(r: EnrollResult): void {
  const who = r.name ? `${r.employeeCode} (${r.name})` : r.employeeCode;
  process.stdout.write(`enrolled ${who}: ${r.modality} ${r.position}, ${r.templates.length} template(s) stored\n`);
  // Each item's outcome was printed as it came (progress); here the tally.
  if (r.upload) process.stdout.write(`  upload: ${r.upload.filter((u) => u.statusCode === 'SUCCESS').length} of ${r.upload.length} item(s) accepted by the attendance service\n`);
  else if (r.uploadError) process.stdout.write(`  upload failed: ${r.uploadError} (the templates are enrolled here; enrol again to repeat the upload)\n`);
  else process.stdout.write('  not uploaded: no attendance API configured\n');
  process.stdout.write(`  site: ${r.publishedToSite ? 'published to every terminal of the site' : 'not published (no MQTT broker or site key)'}\n`);
}

const command: Command = {
  summary: 'enrol an employee\'s finger or iris (captures, quality gate, duplicate check, upload, site)',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        ...COMMON_FLAGS,
        ...SCANNER_FLAGS,
        modality: { type: 'string' },
        position: { type: 'string' },
        present: { type: 'string' },
        captures: { type: 'string' },
        'min-quality': { type: 'string' },
        json: { type: 'boolean' },
      },
      usage,
    );
    const employeeCode = positionals[0]?.trim();
    if (!employeeCode || positionals.length > 1) throw new AgentError('CLI_USAGE', 'name one employee code: edge-agent enroll CODE', {}, { hint: usage });
    const modality = modalityFlag(values.modality);
    const position = values.position ?? (modality === 'iris' ? 'right' : 'right-index');
    const captures = intFlag('captures', values.captures);
    const minQuality = intFlag('min-quality', values['min-quality']);
    if (captures !== undefined && (captures < 1 || captures > 10)) throw new AgentError('CLI_USAGE', '--captures takes 1..10', { captures });
    if (minQuality !== undefined && (minQuality < 0 || minQuality > 100)) throw new AgentError('CLI_USAGE', '--min-quality takes 0..100', { minQuality });
    const presentId = intFlag('present', values.present);
    const config = applyScannerFlags(configForFlags(values), values);
    const secrets = secretsFor(config, values);
    const json = values.json === true;
    const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
    const body = {
      employeeCode,
      modality,
      position,
      ...(captures !== undefined ? { captures } : {}),
      ...(minQuality !== undefined ? { minQuality } : {}),
    };

    const result = await withTerminal<EnrollResult>(
      config,
      secrets,
      async (call) => {
        if (presentId !== undefined) {
          throw new AgentError('CLI_USAGE', '--present works with simulated scanners opened by this command; the agent runs on this data folder and holds its scanners', {}, { hint: 'present the finger on the running agent\'s scanner, or stop the agent' });
        }
        say(`enrolling ${employeeCode} through the running agent`);
        return (await call('enroll', body, (e) => say(describeProgress(e)))) as EnrollResult;
      },
      async (rt) => {
        const { enroll } = await import('../../terminal/enroller.js');
        const { createAttendanceClient } = await import('../../daemon/upstreams.js');
        const client = config.api.url && secrets.apiKey && secrets.apiSecret ? createAttendanceClient(config, secrets) : null;
        let person: SimulatedPerson | null = null;
        if (presentId !== undefined) person = simulatedPerson(rt, modality, presentId);
        try {
          return await enroll(rt, client, { employeeCode, modality, position, ...(captures !== undefined ? { captures } : {}), ...(minQuality !== undefined ? { minQuality } : {}) }, (e) => {
            say(describeProgress(e));
            person?.onProgress(e);
          });
        } finally {
          await person?.stop();
        }
      },
    );
    if (json) printJson(result);
    else printResult(result);
    return 0;
  },
};
export default command;
