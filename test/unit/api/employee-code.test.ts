import { describe, expect, it } from 'vitest';
import { checkEmployeeCode, employeeCodeSchema, lookupEmployeeCode, parseEmployeeCode } from '../../../src/api/employee-code.js';
import { AgentError } from '../../../src/core/errors.js';

const problem = (v: unknown) => {
  const r = checkEmployeeCode(v);
  return r.ok ? null : r.problem;
};

describe('the employee-code rule (agent and service)', () => {
  it('accepts what real systems use, in NFC', () => {
    for (const code of ['E1001', '1042', 'a+b', 'ÅSA-07', 'Ünal.K', '山田_01', 'x'.repeat(64), '𠀀'.repeat(64), '...'])
      expect(checkEmployeeCode(code)).toEqual({ ok: true, code });
    // Decomposed input becomes the composed form (one stored code for one person).
    expect(checkEmployeeCode('Jose\u0301')).toEqual({ ok: true, code: 'Jos\u00e9' });
    expect(checkEmployeeCode(`${'e\u0301'.repeat(64)}`)).toEqual({ ok: true, code: '\u00e9'.repeat(64) });
  });

  it('refuses lengths, lone surrogates, control, bidi, zero-width, white space, separators, . and ..', () => {
    expect(problem('')).toMatch(/empty/);
    expect(problem('x'.repeat(65))).toMatch(/longer than 64/);
    expect(problem('x'.repeat(70_000))).toMatch(/longer than 64/);
    expect(problem('\ud800')).toMatch(/lone surrogate/);
    expect(problem('E\udc001')).toMatch(/lone surrogate/);
    for (const c of [
      '\u0000',
      '\u0007',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u202e',
      '\u202a',
      '\u2066',
      '\u200e',
      '\u061c',
      '\u200b',
      '\u200c',
      '\u200d',
      '\u2060',
      '\ufeff',
      '\u00ad',
      '\ue000',
      '\uffff',
      ' ',
      '\t',
      '\u00a0',
      '\u3000',
      '\u2028',
      '/',
      '\\',
      '?',
      '#',
      '%',
    ]) {
      expect(problem(`E${c}1`), JSON.stringify(c)).toMatch(/holds U\+/);
    }
    expect(problem('.')).toMatch(/not an employee code/);
    expect(problem('..')).toMatch(/not an employee code/);
    expect(problem(1042)).toMatch(/must be a string/);
    expect(problem(null)).toMatch(/must be a string/);
  });

  it('refuses compatibility forms (full width, ligatures, superscripts, circled, Roman numerals, half-width kana), naming the plain form to type', () => {
    expect(problem('Ｅ１００１')).toBe(
      'the employee code "Ｅ１００１" holds U+FF25, a compatibility form of "E" (full-width, ligature, superscript and the like look the same as plain characters in reports): write it as "E1001"',
    );
    for (const [code, plain] of [
      ['E１001', 'E1001'],
      ['ﬁnance-1', 'finance-1'],
      ['E²', 'E2'],
      ['①', '1'],
      ['Ⅳ-7', 'IV-7'],
      ['ｱ01', 'ア01'],
      ['𝔘1', 'U1'],
    ]) {
      expect(problem(code), code).toMatch(/compatibility form/);
      expect(problem(code), code).toContain(`write it as ${JSON.stringify(plain)}`);
      expect(checkEmployeeCode(plain)).toEqual({ ok: true, code: plain });
    }
    // A form whose plain character the rule refuses gets no suggestion.
    expect(problem('E／1')).toMatch(/U\+FF0F, a compatibility form of "\/"/);
    expect(problem('E／1')).not.toMatch(/write it as/);
    // Canonical look-alikes are the same code already (NFC): the Kelvin sign is K.
    expect(checkEmployeeCode('\u212a1')).toEqual({ ok: true, code: 'K1' });
    const r = employeeCodeSchema.safeParse('Ｅ１００１');
    expect(r.error?.issues[0]?.message).toMatch(/write it as "E1001"/);
  });

  it('never echoes a huge input whole', () => {
    expect(problem('x'.repeat(70_000))!.length).toBeLessThan(120);
  });

  it('throws a coded error, and a zod schema gives the NFC code or an issue', () => {
    expect(parseEmployeeCode('E1')).toBe('E1');
    try {
      parseEmployeeCode('..');
      throw new Error('expected a throw');
    } catch (err) {
      expect(err).toBeInstanceOf(AgentError);
      expect((err as AgentError).code).toBe('API_EMPLOYEE_CODE_INVALID');
      expect((err as AgentError).hint).toMatch(/1 to 64 characters/);
    }
    expect(employeeCodeSchema.parse('Jose\u0301')).toBe('Jos\u00e9');
    const r = employeeCodeSchema.safeParse('E\u200b1');
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/U\+200B/);
  });

  it('looks codes up in NFC and leaves text that is not valid as it is', () => {
    expect(lookupEmployeeCode('Jose\u0301')).toBe('Jos\u00e9');
    expect(lookupEmployeeCode('\ud800')).toBe('\ud800');
    // A code stored before the compatibility rule is still found (and can be deleted) as it was stored.
    expect(lookupEmployeeCode('Ｅ１００１')).toBe('Ｅ１００１');
  });
});
