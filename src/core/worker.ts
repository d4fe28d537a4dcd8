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
  return new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`, { eval: true, ...options });
}
