/**
 * Iris camera results for tests that speak for the camera (the driver's tests, the fuzzer): a
 * 320×240 cropped result and its input reports as the driver receives them.
 */
import { chunkResult, encodeResult, type IrisResult } from '../../drivers/iris-hid/protocol.js';

/** A 320×240 cropped (kind 3) result of capture `tag` carrying `pixels` (320 × 240 of them). */
export function croppedResult(tag: number, pixels: Uint8Array): IrisResult {
  return { tag, kind: 3, quality: 90, width: 320, height: 240, pupilX: 160, pupilY: 120, irisRadius: 60, flags: 1, captureMs: 5, pixels };
}

/** The input reports of `r` without their report id, as HidTransport hands them to the driver. */
export function resultBodies(r: IrisResult): Buffer[] {
  return chunkResult(encodeResult(r)).map((c) => c.subarray(1));
}
