/**
 * A preload (`node --import ./native-modules.ts`) that writes, at exit, the native modules (`.node`
 * files and onnxruntime's shared library) this process mapped into memory, one path per line, to
 * the file `$NATIVE_MODULES_LOG`: which commands pay for which native module.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const out = process.env.NATIVE_MODULES_LOG;
if (out) {
  process.on('exit', () => {
    const mapped = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .map((line) => line.split(/\s+/)[5] ?? '');
    const native = [...new Set(mapped.filter((p) => p.endsWith('.node') || /libonnxruntime/.test(p)))];
    writeFileSync(out, native.map((p) => `${p}\n`).join(''));
  });
}
