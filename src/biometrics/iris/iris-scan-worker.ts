/**
 * Worker thread of the iris 1:N scan: claims chunks of the stage-1 sketch scan of one search from
 * the shared counter and writes their scores into the search's shared array (nothing is copied,
 * nothing is sent back). The calling thread takes over any chunk a worker has not finished.
 */
import { parentPort } from 'node:worker_threads';
import { claimChunks, type PreparedProbe } from './iris-scan.js';

export interface ChunkRequest {
  sketch: SharedArrayBuffer;
  coarse: SharedArrayBuffer;
  state: SharedArrayBuffer;
  n: number;
  chunk: number;
  probe: PreparedProbe;
}

const port = parentPort;
if (port) {
  port.on('message', (m: ChunkRequest) => {
    claimChunks(new Int32Array(m.sketch), new Uint16Array(m.coarse), new Int32Array(m.state), m.n, m.chunk, m.probe, true);
  });
}
