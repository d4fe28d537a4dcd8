/** An embedding as the template cache stores it: little-endian float32 values (format `embedding-f32`). */
import { AgentError } from '../../core/errors.js';

export function embeddingToBytes(v: Float32Array): Uint8Array {
  const out = new Uint8Array(v.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  return out;
}

export function embeddingFromBytes(bytes: Uint8Array): Float32Array {
  if (bytes.length === 0 || bytes.length % 4 !== 0) {
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_MALFORMED',
      `an embedding-f32 template holds whole float32 values; got ${bytes.length} bytes`,
      { offset: bytes.length - (bytes.length % 4) },
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = new Float32Array(bytes.length / 4);
  for (let i = 0; i < v.length; i++) v[i] = view.getFloat32(i * 4, true);
  return v;
}
