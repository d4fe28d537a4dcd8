import { dirname, resolve } from 'node:path';
import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { AgentError, describeError, toAgentError } from '../../core/errors.js';
import { loadConfig } from '../../config/config.js';
import { compareTemplates, readTemplate, type LoadedTemplate, type TemplateThresholds } from '../../biometrics/template-file.js';
import { readTemplateFile } from './info.js';

const usage = `usage: edge-agent template compare A B [--json] [--threshold N] [--shift-range N] [--config FILE]
       edge-agent template compare --pairs FILE [--json] [--threshold N] [--shift-range N] [--config FILE]
  Scores two template files of the same modality (ISO/IEC 19794-2 or ANSI 378 fingers, iris
  code v1) and says accept or reject at the configured threshold (biometrics.fingerThreshold:
  score ≈ −10·log10 FMR, higher is better; biometrics.irisThreshold: normalized Hamming
  distance, lower is better). --threshold overrides the threshold of the modality compared.
  --pairs FILE: one pair per line, two paths separated by a tab (relative paths are relative to
  FILE's folder; blank lines and lines starting with # are skipped); prints one line per pair
  in the same order: the score, or "error CODE: message" for a pair that cannot be compared
  (the exit code is then 1).`;

function numberFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new AgentError('CLI_USAGE', `--${name} takes a number, got "${v}"`, { flag: name, value: v }, { hint: usage });
  return n;
}

const command: Command = {
  summary: 'score and decision for two template files, or a list of pairs',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { json: { type: 'boolean' }, pairs: { type: 'string' }, threshold: { type: 'string' }, 'shift-range': { type: 'string' }, config: { type: 'string' } },
      usage,
    );
    const bio = loadConfig({ file: values.config ?? null }).biometrics;
    const threshold = numberFlag('threshold', values.threshold);
    const shiftRange = numberFlag('shift-range', values['shift-range']);
    if (shiftRange !== undefined && (!Number.isInteger(shiftRange) || shiftRange < 0 || shiftRange > 63)) {
      throw new AgentError('CLI_USAGE', `--shift-range takes a whole number 0-63, got ${shiftRange}`, {}, { hint: usage });
    }
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
      if (positionals.length !== 2) throw new AgentError('CLI_USAGE', 'template compare takes two files A B, or --pairs FILE', {}, { hint: usage });
      const r = one(positionals[0]!, positionals[1]!, positionals[0]!, positionals[1]!);
      if (values.json) printJson(r);
      else process.stdout.write(`${r.modality} score ${r.score.toFixed(4)} (${r.scoreKind}; threshold ${r.threshold}): ${r.decision}\n`);
      return 0;
    }
    if (positionals.length > 0) throw new AgentError('CLI_USAGE', '--pairs takes no other file arguments', {}, { hint: usage });
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
          throw new AgentError('CLI_PAIRS_SYNTAX', `${listFile} line ${i + 1}: expected two paths separated by one tab`, { line: i + 1 }, { hint: 'write "A<TAB>B" on each line' });
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
  },
};
export default command;
