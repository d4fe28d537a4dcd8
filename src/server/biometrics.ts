/**
 * Operations 4 and 5: enrol and delete biometric records. Each item is checked and stored on its
 * own (one row, sealed: see biometric-seal.ts); its envelope says how it went:
 * - modality other than face, finger, iris (any case) → BIOMETRIC_TYPE_NOT_SUPPORTED
 * - neither image nor template, or one that is not base64 text → INVALID_PARAMETERS
 * - an image that is not PNG, JPEG, JPEG 2000, BMP, PGM or WSQ → FAILED_TO_EXTRACT
 * - more than `maxRecordsPerModality` records for the user and modality → ENROLLMENT_ERROR
 * - the same data enrolled again → SUCCESS, no second record
 * A path code outside the employee-code rule (stored before the rule, or never) is INVALID_PARAMETERS
 * at the top level: nothing is attached to it. Stored records are never returned.
 *
 * Tested in test/integration/api-contract.test.ts (operations 4 and 5: each item's status, sealed
 * records, the limit, a path code outside the rule) and test/integration/api-raw-http.test.ts.
 */
import { EMPLOYEE_CODE_RULE } from '../api/employee-code.js';
import { API_MODALITIES } from '../core/modality.js';
import { answer, BadRequest, fail, isObject, ok, plural, type HandlerResult } from './envelope.js';
import { employeeCodeProblem, type ServiceContext } from './context.js';

const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

function decodeBase64(v: string): Buffer | undefined {
  const s = v.replace(/\s+/g, '');
  if (s === '' || !BASE64.test(s)) return undefined;
  return Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** True when the bytes start like an image format features can be extracted from. */
export function looksLikeImage(b: Buffer): boolean {
  const starts = (...sig: number[]) => sig.every((x, i) => b[i] === x);
  return (
    starts(0x89, 0x50, 0x4e, 0x47) || // PNG
    starts(0xff, 0xd8, 0xff) || // JPEG
    starts(0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50) || // JPEG 2000
    starts(0xff, 0x4f, 0xff, 0x51) || // JPEG 2000 codestream
    starts(0x42, 0x4d) || // BMP
    starts(0x50, 0x35) || // PGM (binary)
    starts(0x50, 0x32) || // PGM (text)
    starts(0xff, 0xa0) // WSQ
  );
}

type Checked = { error: { code: string; text: string } } | { modality: string; image: Buffer | null; template: Buffer | null };

function checkItem(item: unknown): Checked {
  const err = (code: string, text: string) => ({ error: { code, text } });
  if (!isObject(item)) return err('INVALID_PARAMETERS', 'the item is not an object');
  const modality = typeof item.modality === 'string' ? item.modality.toLowerCase() : undefined;
  if (!modality || !(API_MODALITIES as readonly string[]).includes(modality)) {
    return err('BIOMETRIC_TYPE_NOT_SUPPORTED', `modality "${String(item.modality)}" is not one of ${API_MODALITIES.join(', ')}`);
  }
  const read = (field: 'image' | 'template'): Buffer | null | 'bad' => {
    const v = item[field];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string') return 'bad';
    return decodeBase64(v) ?? 'bad';
  };
  const image = read('image');
  const template = read('template');
  if (image === 'bad') return err('INVALID_PARAMETERS', 'image must be base64 text');
  if (template === 'bad') return err('INVALID_PARAMETERS', 'template must be base64 text');
  if (!image && !template) return err('INVALID_PARAMETERS', 'an item needs an image or a template');
  if (image && !looksLikeImage(image))
    return err('FAILED_TO_EXTRACT', 'no features can be extracted: the image is not PNG, JPEG, JPEG 2000, BMP, PGM or WSQ');
  return { modality, image, template };
}

export async function updateBiometrics(ctx: ServiceContext, code: string, body: unknown): Promise<HandlerResult> {
  if (!Array.isArray(body)) throw new BadRequest('the body must be a JSON array of biometric items');
  if (body.length > ctx.limits.maxBiometricItemsPerRequest)
    throw new BadRequest(`at most ${ctx.limits.maxBiometricItemsPerRequest} biometric items per request`);
  const items = body.length;
  if (items === 0) return answer(fail('INVALID_PARAMETERS', 'the array of biometric items is empty'), { items });
  // A code the rule refuses (one stored before it, in a compatibility form, say) takes no new records.
  const problem = employeeCodeProblem(code);
  if (problem) return answer(fail('INVALID_PARAMETERS', `${problem}: an employee code is ${EMPLOYEE_CODE_RULE}`), { items });
  const checked = body.map(checkItem);
  // The employee is locked so that two replicas enrolling at once cannot pass the limit together.
  return ctx.store.transaction(async (tx) => {
    await tx.lockEmployees([code]);
    if (!(await tx.user(code))) return answer(fail('USER_NOT_AVAILABLE', `no user with employeeCode "${code}"`), { items });
    const results = [];
    for (const c of checked) {
      if ('error' in c) {
        results.push(fail(c.error.code, c.error.text));
        continue;
      }
      const digest = ctx.seal.digest(c.modality, c.image ?? '', c.template ?? '');
      if (await tx.hasBiometric(code, c.modality, digest)) {
        results.push(ok(null, 'already enrolled; kept once'));
        continue;
      }
      if ((await tx.countBiometrics(code, c.modality)) >= ctx.limits.maxRecordsPerModality) {
        results.push(
          fail(
            'ENROLLMENT_ERROR',
            `employee already has ${ctx.limits.maxRecordsPerModality} ${c.modality} records; delete them before enrolling again`,
          ),
        );
        continue;
      }
      await tx.insertBiometric({
        employeeCode: code,
        modality: c.modality,
        digest,
        sealedImage: c.image ? ctx.seal.seal(c.image) : null,
        sealedTemplate: c.template ? ctx.seal.seal(c.template) : null,
        createdAt: new Date().toISOString(),
      });
      results.push(ok(null, 'enrolled'));
    }
    const good = results.filter((r) => r.statusCode === 'SUCCESS').length;
    return answer(ok(results, `${good} of ${items} items enrolled`), { items });
  });
}

export async function deleteBiometrics(ctx: ServiceContext, code: string): Promise<HandlerResult> {
  return ctx.store.transaction(async (tx) => {
    await tx.lockEmployees([code]);
    if (!(await tx.user(code))) return answer(fail('USER_NOT_AVAILABLE', `no user with employeeCode "${code}"`));
    const n = await tx.deleteBiometrics(code);
    return answer(ok(null, `${n} biometric ${plural(n, 'record')} deleted`));
  });
}
