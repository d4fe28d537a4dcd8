/**
 * Worker thread of the iris 1:N scan: runs `scanRange` over a slice of the gallery held in
 * SharedArrayBuffers (nothing is copied) and posts the candidates back.
 */
import { parentPort } from 'node:worker_threads';
import { scanRange, type PreparedProbe } from './iris-scan.js';

export interface ScanRequest {
  seq: number;
  codes: SharedArrayBuffer;
  sketch: SharedArrayBuffer;
  start: number;
  end: number;
  probe: PreparedProbe;
  prefilter: number;
  threshold: number;
  limit: number;
}

const port = parentPort;
if (port) {
  port.on('message', (m: ScanRequest) => {
    try {
      const r = scanRange(new Int32Array(m.codes), new Int32Array(m.sketch), m.start, m.end, m.probe, m.prefilter, m.threshold, m.limit);
      port.postMessage({ seq: m.seq, ...r }, [r.slots.buffer as ArrayBuffer, r.hd.buffer as ArrayBuffer, r.hdRaw.buffer as ArrayBuffer, r.shift.buffer as ArrayBuffer, r.bits.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ seq: m.seq, error: err instanceof Error ? err.message : String(err) });
    }
  });
}
