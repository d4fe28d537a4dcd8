/**
 * `npm run bench:match -- [--json] [--iris-n N] [--finger-n N] [--searches N] [--only iris|finger]`: the matching
 * benchmark. Prints `{finger: {...}, iris: {...}}` (finger from match-finger.ts, iris from
 * match-iris.ts). `--arm64 [--arm64-fingers F]` prints `{fingerArm64: {...}}` instead: finger 1:N on
 * the arm64 release, here and under qemu-user (match-arm64.ts). Never a pass/fail test: the figures
 * and the ratio to the floor are the output.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { benchFingerArm64 } from './match-arm64.js';
import { benchIris } from './match-iris.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    'iris-n': { type: 'string' },
    'finger-n': { type: 'string' },
    only: { type: 'string' },
    searches: { type: 'string' },
    arm64: { type: 'boolean' },
    'arm64-fingers': { type: 'string' },
  },
  strict: true,
});
const log = (m: string) => process.stderr.write(`${m}\n`);
const out: Record<string, unknown> = {};

if (values.arm64) {
  out.fingerArm64 = await benchFingerArm64({
    ...(values['finger-n'] ? { indexSize: Number(values['finger-n']) } : {}),
    ...(values['arm64-fingers'] ? { fingers: Number(values['arm64-fingers']) } : {}),
    log,
  });
} else if (values.only !== 'iris') {
  const here = new URL('.', import.meta.url);
  const fingerFile = ['match-finger.ts', 'match-finger.js'].map((f) => new URL(f, here)).find((u) => existsSync(u));
  if (fingerFile) {
    const mod = (await import(fingerFile.href)) as { benchFinger: (o: Record<string, unknown>) => Promise<unknown> | unknown };
    out.finger = await mod.benchFinger({ ...(values['finger-n'] ? { indexSize: Number(values['finger-n']) } : {}) });
  } else {
    out.finger = { skipped: 'test/bench/match-finger.ts is not in this tree yet: iris only' };
  }
}
if (!values.arm64 && values.only !== 'finger') {
  out.iris = await benchIris({
    ...(values['iris-n'] ? { n: Number(values['iris-n']) } : {}),
    ...(values.searches ? { searches: Number(values.searches) } : {}),
    log,
  });
}
out.loadAverage = loadavg().map((x) => Math.round(x * 100) / 100);
process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
