/**
 * Tested in test/integration/identify-template.test.ts, test/integration/agent-enroll.test.ts and
 * test/integration/several-fingers.test.ts (a second finger asked for, told apart or timed out).
 */
import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, withJson } from '../command.js';
import { withCommonOptions, withScannerOptions, type CommonValues, type ScannerValues } from '../common-options.js';
import { scoreText } from '../../core/identification.js';
import type { IdentifyOnceResult } from '../../terminal/identify-on-demand.js';
import { logForPeople } from '../log-options.js';

type Values = CommonValues & ScannerValues & { modality?: string; present?: string; template?: string; json?: boolean };

/** What a match needed, where that moves with how many templates are enrolled (irises). */
function neededText(r: IdentifyOnceResult): string {
  if (r.needed === undefined) return '';
  return r.modality === 'iris'
    ? `; with this many iris templates enrolled a match needs ${Math.floor(r.needed * 1000) / 1000} or less (biometrics.irisFpir)`
    : '';
}

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'identify',
    summary: 'identify one finger or eye on this terminal and print who it is and the score',
    audience: 'technician',
    details: `Takes one capture, identifies it against the enrolled templates on this terminal and prints who
it is and the score. Nothing is punched. Runs through the agent's control socket when the agent
runs on this data folder, else opens the scanners in this process. With --template FILE the
file's template is identified instead of a capture (no scanner needed).
Exit code 0 when someone was identified, 1 when nobody matched.`,
  })
    .option('--modality <modality>', 'finger, iris or badge (default finger)')
    .option(
      '--present <id>',
      'with a simulated scanner in this process: virtual finger (or eye) ID is presented when the capture is asked for; ID,ID2 presents finger ID2 when a second finger is asked for',
    )
    .option(
      '--template <file>',
      'identify this template file instead of a capture: an ISO 19794-2 / ANSI 378 finger record or an iris-code-v1 file (edge-agent template extract makes them); the modality follows from the file',
    );
  withJson(cmd, 'print the result as one JSON object');
  withScannerOptions(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    // For a person: the agent parts started here log warnings only, as readable lines (log-options.ts).
    await logForPeople();
    const { AgentError } = await import('../../core/errors.js');
    const { configForFlags, secretsFor } = await import('../../config/load.js');
    const { applyScannerFlags, withTerminal } = await import('../terminal-session.js');
    const { describeProgress, modalityFlag, simulatedPerson } = await import('../enroll-session.js');
    const presentIds = values.present === undefined ? undefined : values.present.split(',').map((id) => intFlag('present', id)!);
    const presentId = presentIds?.[0];
    let template: Buffer | null = null;
    if (values.template !== undefined) {
      const { readFileSync } = await import('node:fs');
      const { isIrisTemplate } = await import('../../biometrics/iris/iris-code.js');
      if (presentId !== undefined)
        throw new AgentError(
          'CLI_USAGE',
          '--template identifies a file; leave out --present',
          {},
          { hint: 'give one of --template FILE or --present ID' },
        );
      try {
        template = readFileSync(values.template);
      } catch (err) {
        throw new AgentError(
          'CLI_USAGE',
          `cannot read ${values.template}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          { file: values.template },
          { hint: 'check the path of the template file' },
        );
      }
      if (values.modality === undefined) values.modality = isIrisTemplate(template) ? 'iris' : 'finger';
    }
    const modality = modalityFlag(values.modality);
    const config = applyScannerFlags(configForFlags(values, process.env, { command: 'edge-agent identify' }), values);
    const secrets = secretsFor(config, values);
    const json = values.json === true;
    const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);

    const r = await withTerminal<IdentifyOnceResult>(
      config,
      secrets,
      async (call) => {
        if (template) return (await call('identify-template', { modality, template: template.toString('base64') })) as IdentifyOnceResult;
        if (presentId !== undefined) {
          throw new AgentError(
            'CLI_USAGE',
            '--present works with simulated scanners opened by this command; the agent runs on this data folder and holds its scanners',
            {},
            { hint: "present the finger on the running agent's scanner, or stop the agent" },
          );
        }
        return (await call('identify', { modality }, (e) => say(describeProgress(e)))) as IdentifyOnceResult;
      },
      async (rt) => {
        const { identifyOnce, identifyTemplate } = await import('../../terminal/identify-on-demand.js');
        if (template) return identifyTemplate(rt, modality, template);
        let person: Awaited<ReturnType<typeof simulatedPerson>> | null = null;
        if (presentIds !== undefined) person = simulatedPerson(rt, modality, presentIds, { holdMs: 1000 });
        const { secondFingerPolicy } = await import('../../terminal/second-finger.js');
        try {
          return await identifyOnce(
            rt,
            modality,
            (e) => {
              say(describeProgress(e));
              if (e.step === 'capture' || e.step === 'second-finger') person?.onProgress(e);
            },
            undefined,
            undefined,
            undefined,
            secondFingerPolicy(config),
          );
        } finally {
          await person?.stop();
        }
      },
    );
    const two = r.secondFinger ? ' on two fingers' : '';
    if (json) printJson(r);
    else if (r.decision === 'accept' && r.employeeCode)
      process.stdout.write(
        `identified ${r.employeeCode}${r.name ? ` (${r.name})` : ''}${two}: score ${scoreText(r.score, r.modality)} (${r.modality}, ${Math.round(r.ms)} ms)\n`,
      );
    else if (r.detail) process.stdout.write(`not identified: ${r.detail} (${r.modality}, ${Math.round(r.ms)} ms)\n`);
    else
      process.stdout.write(
        `not identified: nobody enrolled here matches (best score ${scoreText(r.score, r.modality)}${neededText(r)}, ${r.modality}, ${Math.round(r.ms)} ms)\n`,
      );
    return r.decision === 'accept' && r.employeeCode ? 0 : 1;
  });
}
