import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode, LAYER_TABLES, isErrorCode } from '../../../src/core/error-codes.js';

describe('the error table joined from the layers', () => {
  it('holds every code of every layer once, with its layer', () => {
    const seen = new Map<string, string>();
    for (const table of LAYER_TABLES) {
      const layers = new Set(Object.values(table).map((row) => row.layer));
      expect(layers.size, `one layer per table: ${[...layers].join(', ')}`).toBe(1);
      for (const [code, row] of Object.entries(table)) {
        expect(seen.get(code), `${code} is in two tables`).toBeUndefined();
        seen.set(code, row.layer);
        expect(ERROR_CODES[code as keyof typeof ERROR_CODES]).toEqual(row);
      }
    }
    expect(Object.keys(ERROR_CODES).sort()).toEqual([...seen.keys()].sort());
    expect(new Set(LAYER_TABLES.map((t) => Object.values(t)[0]?.layer)).size).toBe(LAYER_TABLES.length);
  });

  it('refuses a misspelt code when compiling (tsc checks this file) and when it arrives over a wire', () => {
    const misspelt = (): ErrorCode =>
      // @ts-expect-error: not a code of the table
      'API_TIMEOUTX';
    expect(isErrorCode(misspelt())).toBe(false);
    expect(isErrorCode('API_TIMEOUT')).toBe(true);
  });
});
