import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../../../src/cli/commands/ops.js';

const code = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('ops send --arg', () => {
  it('takes name=value as a string (codes that look like numbers stay strings) and name:=JSON as any value', () => {
    expect(parseArgs(['employeeCode=1042', 'note=a=b', 'ids:=["01J1","01J2"]', 'n:=3', 'empty='])).toEqual({
      employeeCode: '1042',
      note: 'a=b',
      ids: ['01J1', '01J2'],
      n: 3,
      empty: '',
    });
    expect(parseArgs()).toEqual({});
  });
  it('names what is wrong: no name, bad JSON, the members ops send sets itself', () => {
    for (const bad of ['=x', 'no-equals', '1x=2', 'ids:=[1,', 'transaction=t', 'auth:={}'])
      expect(
        code(() => parseArgs([bad])),
        bad,
      ).toBe('CLI_USAGE');
  });
});
