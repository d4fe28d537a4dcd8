/**
 * Tested in test/integration/template-cli.test.ts (genuine and impostor pairs of iris codes and
 * finger records; a finger never compared with an iris).
 */
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { action, defineCommand, printJson, usageError, withJson } from '../command.js';
import { AgentError, describeError, toAgentError } from '../../core/errors.js';
import type { LoadedTemplate, TemplateThresholds } from '../../biometrics/template-file.js';
import { readTemplateFile } from './info.js';

type Values = { json?: boolean; pairs?: string; threshold?: string; 'shift-range'?: string; config?: string };

function numberFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw usageError('template compare', `--${name} takes a number, got "${v}"`, { flag: name, value: v });
  return n;
}

export default function register(template: Command): Command {
  const cmd = defineCommand(template, {
    name: 'compare',
    summary: 'score and decision for two template files, or a list of pairs',
    details: `Scores two template files of the same modality (ISO/IEC 19794-2 or ANSI 378 fingers, iris
code v1) and says accept or reject at the configured threshold (biometrics.fingerThreshold:
score ≈ −10·log10 FMR, higher is better; biometrics.irisThreshold: normalized Hamming
distance, lower is better).
--pairs FILE: one pair per line, two paths separated by a tab (relative paths are relative to
FILE's folder; blank lines and lines starting with # are skipped); prints one line per pair
in the same order: the score, or "error CODE: message" for a pair that cannot be compared
(the exit code is then 1).`,
  })
    .usage('[options] A B | --pairs FILE [options]')
    .argument('[A]', 'a template file')
    .argument('[B]', 'the template file to compare it with');
  withJson(cmd, 'print the result as JSON on stdout (with --pairs: one JSON object per line)');
  cmd
    .option('--pairs <file>', 'compare the pairs listed in FILE instead of A and B')
    .option('--threshold <n>', "the threshold of the modality compared, instead of the config's")
    .option(
      '--shift-range <n>',
      'iris: column shifts tried each way, a whole number 0-63 (default biometrics.irisShiftRange of the config)',
    )
    .option('--config <file>', 'config file to take the thresholds from');
  return action<Values>(cmd, async (values, positionals) => {
    const threshold = numberFlag('threshold', values.threshold);
    const shiftRange = numberFlag('shift-range', values['shift-range']);
    if (shiftRange !== undefined && (!Number.isInteger(shiftRange) || shiftRange < 0 || shiftRange > 63)) {
      throw usageError('template compare', `--shift-range takes a whole number 0-63, got ${shiftRange}`, {
        flag: 'shift-range',
        value: shiftRange,
      });
    }
    if (values.pairs === undefined && positionals.length !== 2)
      throw usageError('template compare', 'template compare takes two files A B, or --pairs FILE');
    if (values.pairs !== undefined && positionals.length > 0) throw usageError('template compare', '--pairs takes no other file arguments');
    const { configForFlags } = await import('../../config/load.js');
    const { compareTemplates, readTemplate } = await import('../../biometrics/template-file.js');
    const bio = configForFlags({ ...(values.config ? { config: values.config } : {}) }, process.env, { require: false }).biometrics;
    const thresholds = (modality: string): TemplateThresholds => ({
      irisThreshold: modality === 'iris' && threshold !== undefined ? threshold : bio.irisThreshold,
      fingerThreshold: modality === 'finger' && threshold !== undefined ? threshold : bio.fingerThreshold,
      irisShiftRange: shiftRange ?? bio.irisShiftRange,
    });
    const loaded = new Map<string, LoadedTemplate>();
    const load = (path: string, shown: string): LoadedTemplate => {
      let t = loaded.get(path);
      if (!t) {
        t = readTemplate(readTemplateFile(path), shown);
        loaded.set(path, t);
      }
      return t;
    };
    const one = (pathA: string, pathB: string, shownA: string, shownB: string) => {
      const a = load(pathA, shownA);
      const b = load(pathB, shownB);
      return { a: shownA, b: shownB, ...compareTemplates(a, b, thresholds(a.modality), [shownA, shownB]) };
    };

    if (values.pairs === undefined) {
      const r = one(positionals[0]!, positionals[1]!, positionals[0]!, positionals[1]!);
      if (values.json) printJson(r);
      else process.stdout.write(`${r.modality} score ${r.score.toFixed(4)} (${r.scoreKind}; threshold ${r.threshold}): ${r.decision}\n`);
      return 0;
    }
    const listFile = values.pairs;
    const text = Buffer.from(readTemplateFile(listFile)).toString('utf8');
    const base = dirname(resolve(listFile));
    let failed = 0;
    const out: string[] = [];
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '' || line.startsWith('#')) continue;
      try {
        const parts = line.split('\t');
        if (parts.length !== 2 || !parts[0] || !parts[1]) {
          throw new AgentError(
            'CLI_PAIRS_SYNTAX',
            `${listFile} line ${i + 1}: expected two paths separated by one tab`,
            { line: i + 1 },
            { hint: 'write "A<TAB>B" on each line' },
          );
        }
        const r = one(resolve(base, parts[0]), resolve(base, parts[1]), parts[0], parts[1]);
        out.push(values.json ? JSON.stringify({ line: i + 1, ...r }) : String(r.score));
      } catch (err) {
        failed++;
        const e = toAgentError(err);
        out.push(values.json ? JSON.stringify({ line: i + 1, error: e.toJSON() }) : `error ${describeError(e).split('\n')[0]}`);
      }
      if (out.length >= 256) process.stdout.write(`${out.splice(0).join('\n')}\n`);
    }
    if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
    return failed > 0 ? 1 : 0;
  });
}
