/**
 * Tested in test/unit/biometrics/extract/extractor.test.ts and
 * test/unit/biometrics/iris/iris-index.test.ts (worker threads started from the sources under tsx).
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts a worker thread from a module next to the caller: the built `.js` file, or, when the
 * caller runs from the TypeScript sources (tsx, vitest), the `.ts` file with tsx registered in the
 * worker first (an `--import tsx` execArgv does not reach a worker's entry module under vitest).
 *
 *   startWorker(import.meta.url, './extract-worker')
 */
export function startWorker(callerUrl: string, relativeNoExtension: string, options: { resourceLimits?: ResourceLimits } = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`${relativeNoExtension}.js`, callerUrl), options);
  const url = new URL(`${relativeNoExtension}.ts`, callerUrl).href;
  // By its file URL: an eval'd worker resolves bare names from the working folder, which need not
  // be the checkout (a command run from /etc/edge-agent or a technician's home).
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url)}); })`, {
    eval: true,
    ...options,
  });
}
