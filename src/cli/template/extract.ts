/**
 * Tested in test/integration/template-extract.test.ts (edge-agent template extract on image files).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { action, defineCommand, intFlag, printJson, usageError, withJson } from '../command.js';
import { AgentError } from '../../core/errors.js';
import type { BiometricModality } from '../../core/modality.js';

type Values = { modality: BiometricModality; image: string; out: string; dpi?: string; json?: boolean };

export default function register(template: Command): Command {
  const cmd = defineCommand(template, {
    name: 'extract',
    summary: 'image (PGM/PNG) → finger or iris template',
    details: `Turns a grayscale image (PGM or PNG) into a template file: an ISO/IEC 19794-2:2005 minutiae
record for a finger, an iris code v1 for an eye. The template is written with mode 0600.
An unusable capture fails with BIOMETRICS_UNUSABLE_CAPTURE and the reason.`,
  })
    .addOption(new Option('--modality <modality>', 'finger or iris').choices(['finger', 'iris']).makeOptionMandatory())
    .requiredOption('--image <file>', 'the grayscale image, PGM or PNG')
    .requiredOption('--out <file>', 'where to write the template (mode 0600)')
    .option(
      '--dpi <n>',
      'resolution of a fingerprint image; without it the image\'s own (PNG pHYs, a PGM comment such as "# 500 dpi"), else 500 is assumed, with a warning. Resampled to 500',
    );
  withJson(
    cmd,
    'print {"modality", "image", "out", "width", "height", "dpi", "dpiSource" (finger), "bytes", "quality", "qualityFeatures", "minutiae"|"validBits", "ms", "warnings"?}',
  );
  return action<Values>(cmd, async (values) => {
    const modality = values.modality;
    const dpi = intFlag('dpi', values.dpi);
    if (dpi !== undefined && (dpi < 100 || dpi > 2000))
      throw usageError('template extract', `--dpi ${dpi} is out of range (100..2000)`, { flag: 'dpi', dpi });
    const { decodeImage } = await import('../../biometrics/image/decode-image.js');
    const { extractTemplate } = await import('../../biometrics/extract/extract-image.js');
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(values.image);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new AgentError(
        'CLI_FILE_UNREADABLE',
        `cannot read ${values.image}: ${e.code ?? e.message}`,
        { file: values.image },
        { hint: 'check the path and the permissions' },
      );
    }
    const image = decodeImage(bytes);
    const t0 = performance.now();
    const r = await extractTemplate({ modality, image, ...(dpi !== undefined ? { finger: { dpi } } : {}) });
    const ms = Math.round(performance.now() - t0);
    const warnings: string[] = [];
    if (modality === 'finger' && r.dpiSource === 'assumed') {
      warnings.push(
        image.dpi !== undefined
          ? `${values.image} says ${image.dpi} dpi, which no fingerprint scanner uses (a screen default): assumed 500 dpi; pass --dpi N with the scanner's resolution`
          : `${values.image} does not say its resolution: assumed 500 dpi; pass --dpi N with the scanner's resolution (a wrong one costs matches)`,
      );
    }
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    const tmp = `${values.out}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, r.template, { mode: 0o600 });
      renameSync(tmp, values.out);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new AgentError(
        'CLI_FILE_UNWRITABLE',
        `cannot write ${values.out}: ${e.code ?? e.message}`,
        { file: values.out },
        { hint: 'check the directory exists, is writable and has free space' },
      );
    }
    const summary = {
      modality,
      image: values.image,
      out: values.out,
      width: image.width,
      height: image.height,
      ...(modality === 'finger' ? { dpi: r.dpi, dpiSource: r.dpiSource } : {}),
      bytes: r.template.length,
      quality: r.quality,
      ...(r.qualityFeatures ? { qualityFeatures: roundFeatures(r.qualityFeatures) } : {}),
      [modality === 'finger' ? 'minutiae' : 'validBits']: r.features,
      ms,
      ...(warnings.length ? { warnings } : {}),
    };
    if (values.json) printJson(summary);
    else
      process.stdout.write(
        `${modality} template written to ${values.out}: ${r.template.length} bytes, quality ${r.quality}, ${modality === 'finger' ? `${r.features} minutiae, read at ${r.dpi} dpi (${r.dpiSource})` : `${r.features} valid bits`} (${ms} ms)\n`,
      );
    return 0;
  });
}

/** The quality measures at a precision a technician can read (3 decimals). */
function roundFeatures(f: object): Record<string, number> {
  return Object.fromEntries(Object.entries(f as Record<string, number>).map(([k, v]) => [k, Math.round(v * 1000) / 1000]));
}
