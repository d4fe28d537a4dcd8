/**
 * An enrolment's templates sent to the attendance service (operation 4), each item's outcome
 * reported as it comes. A failed upload does not undo the local enrolment: it is reported, and
 * enrolling again repeats it. A module's own template (a vendor format) is never uploaded.
 *
 * Tested in test/integration/agent-enroll.test.ts (a full enrolment: three captures, the module
 * template, the upload to the attendance service).
 */
import type { AttendanceClient } from '../api/client.js';
import { toAgentError } from '../core/errors.js';
import type { BiometricModality } from '../core/modality.js';
import type { Progress } from './guided-capture.js';

export interface EnrollmentUpload {
  /** Each item's status as the service gave it; null when nothing was sent. */
  upload: Array<{ statusCode: string; statusDescription: string | null }> | null;
  /** Why the upload failed as a whole (`CODE: message`), null otherwise. */
  uploadError: string | null;
}

export async function uploadEnrollment(
  client: AttendanceClient | null,
  employeeCode: string,
  modality: BiometricModality,
  taken: ReadonlyArray<{ data: Uint8Array }>,
  progress: Progress,
): Promise<EnrollmentUpload> {
  if (!client) return { upload: null, uploadError: null };
  if (taken.length === 0) {
    progress({ step: 'upload', message: 'only a module template was taken (vendor format): nothing uploaded to the service' });
    return { upload: null, uploadError: null };
  }
  try {
    const env = await client.updateBiometrics(
      employeeCode,
      taken.map((t) => ({ modality, template: Buffer.from(t.data).toString('base64') })),
    );
    let upload = (env.returnValue ?? []).map((i) => ({ statusCode: String(i.statusCode), statusDescription: i.statusDescription ?? null }));
    if (env.statusCode !== 'SUCCESS' && upload.length === 0)
      upload = [{ statusCode: String(env.statusCode), statusDescription: env.statusDescription ?? null }];
    for (const [i, u] of upload.entries())
      progress({ step: 'upload', item: i + 1, statusCode: u.statusCode, statusDescription: u.statusDescription });
    return { upload, uploadError: null };
  } catch (err) {
    const e = toAgentError(err);
    const uploadError = `${e.code}: ${e.message}`;
    progress({
      step: 'upload',
      error: uploadError,
      message: 'the templates are enrolled here; the upload to the service failed and can be repeated by enrolling again',
    });
    return { upload: null, uploadError };
  }
}
