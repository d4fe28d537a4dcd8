/**
 * Worker thread of the iris 1:N scan: claims chunks of the stage-1 sketch scan of the current
 * search from the shared counter and writes their scores into the shared score array (nothing is
 * copied, nothing is sent back). The calling thread takes over any chunk a worker has not finished.
 *
 * The worker is told once about each shared buffer (the gallery's sketch words when they are
 * reallocated, each set of search buffers when it is made); a search is then the message
 * `{type: 'search', scratch}`, and everything else it needs is in shared memory.
 *
 * Tested in test/unit/biometrics/iris/iris-index.test.ts (the worker path agrees with the
 * in-process path; the workers compute the whole sketch scan when the caller leaves it to them).
 */
import { parentPort } from 'node:worker_threads';
import { workerClaimChunks, type SearchScratch } from './iris-scan.js';

export type ScanWorkerMessage =
  | { type: 'gallery'; sketch: SharedArrayBuffer; version: number }
  | { type: 'scratch'; id: number; state: SharedArrayBuffer; coarse: SharedArrayBuffer; probeSketch: SharedArrayBuffer }
  | { type: 'forget'; id: number }
  | { type: 'search'; scratch: number };

const port = parentPort;
if (port) {
  let sketch: Int32Array = new Int32Array(0);
  let galleryVersion = -1;
  const scratches = new Map<number, SearchScratch>();
  port.on('message', (m: ScanWorkerMessage) => {
    if (m.type === 'gallery') {
      sketch = new Int32Array(m.sketch);
      galleryVersion = m.version;
    } else if (m.type === 'scratch') {
      scratches.set(m.id, {
        state: new Int32Array(m.state),
        coarse: new Uint16Array(m.coarse),
        probeSketch: new Int32Array(m.probeSketch),
      });
    } else if (m.type === 'forget') {
      scratches.delete(m.id);
    } else {
      const s = scratches.get(m.scratch);
      if (s) workerClaimChunks(sketch, galleryVersion, s);
    }
  });
}
