import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from '../command.js';
import { intFlag, parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { decodeImage } from '../../biometrics/image/decode-image.js';
import { extractTemplate, type Modality } from '../../biometrics/extract/extract-image.js';

const usage = `usage: edge-agent template extract --modality finger|iris --image FILE --out FILE [--dpi N] [--json]
  Turns a grayscale image (PGM or PNG) into a template file: an ISO/IEC 19794-2:2005 minutiae
  record for a finger, an iris code v1 for an eye. The template is written with mode 0600.
  --dpi N   resolution of a fingerprint image; without it the image's own (PNG pHYs, a PGM
            comment such as "# 500 dpi"), else 500 is assumed, with a warning. Resampled to 500.
  An unusable capture fails with BIOMETRICS_UNUSABLE_CAPTURE and the reason.`;

const command: Command = {
  summary: 'image (PGM/PNG) → finger or iris template',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { modality: { type: 'string' }, image: { type: 'string' }, out: { type: 'string' }, dpi: { type: 'string' }, json: { type: 'boolean' } }, usage, false);
    const modality = values.modality as Modality | undefined;
    if (modality !== 'finger' && modality !== 'iris') throw new AgentError('CLI_USAGE', `--modality must be finger or iris${modality ? `, got "${modality}"` : ''}`, {}, { hint: usage });
    if (!values.image || !values.out) throw new AgentError('CLI_USAGE', 'template extract needs --image FILE and --out FILE', {}, { hint: usage });
    const dpi = intFlag('dpi', values.dpi);
    if (dpi !== undefined && (dpi < 100 || dpi > 2000)) throw new AgentError('CLI_USAGE', `--dpi ${dpi} is out of range (100..2000)`, { dpi }, { hint: usage });
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(values.image);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new AgentError('CLI_FILE_UNREADABLE', `cannot read ${values.image}: ${e.code ?? e.message}`, { file: values.image }, { hint: 'check the path and the permissions' });
    }
    const image = decodeImage(bytes);
    const t0 = performance.now();
    const r = await extractTemplate({ modality, image, ...(dpi !== undefined ? { finger: { dpi } } : {}) });
    const ms = Math.round(performance.now() - t0);
    const warnings: string[] = [];
    if (modality === 'finger' && r.dpiSource === 'assumed') {
      warnings.push(image.dpi !== undefined
        ? `${values.image} says ${image.dpi} dpi, which no fingerprint scanner uses (a screen default): assumed 500 dpi; pass --dpi N with the scanner's resolution`
        : `${values.image} does not say its resolution: assumed 500 dpi; pass --dpi N with the scanner's resolution (a wrong one costs matches)`);
    }
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    const tmp = `${values.out}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, r.template, { mode: 0o600 });
      renameSync(tmp, values.out);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new AgentError('CLI_FILE_UNWRITABLE', `cannot write ${values.out}: ${e.code ?? e.message}`, { file: values.out }, { hint: 'check the directory exists, is writable and has free space' });
    }
    const summary = { modality, image: values.image, out: values.out, width: image.width, height: image.height, ...(modality === 'finger' ? { dpi: r.dpi, dpiSource: r.dpiSource } : {}), bytes: r.template.length, quality: r.quality, [modality === 'finger' ? 'minutiae' : 'validBits']: r.features, ms, ...(warnings.length ? { warnings } : {}) };
    if (values.json) printJson(summary);
    else process.stdout.write(`${modality} template written to ${values.out}: ${r.template.length} bytes, quality ${r.quality}, ${modality === 'finger' ? `${r.features} minutiae, read at ${r.dpi} dpi (${r.dpiSource})` : `${r.features} valid bits`} (${ms} ms)\n`);
    return 0;
  },
};
export default command;
