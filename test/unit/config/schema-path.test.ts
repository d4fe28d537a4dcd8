import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config/config.js';
import { type AnySchema, knownKeys, schemaAt } from '../../../src/config/schema-path.js';

const root = ConfigSchema as unknown as AnySchema;

describe('schema-path: the schema at a path of keys', () => {
  it('finds the schema under defaults and nullables, through lists and records', () => {
    expect(schemaAt(['terminal', 'id'], root)?._zod.def.type).toBe('string');
    expect(schemaAt(['api', 'url'], root)?._zod.def.type).toBe('string'); // nullable, default null: unwrapped
    expect(schemaAt(['scanners', 0, 'family'], root)?._zod.def.type).toBe('enum');
    expect(schemaAt(['logging', 'modules', 'drivers:*'], root)?._zod.def.type).toBe('enum');
    expect(schemaAt(['upstream'], root)?._zod.def.type).toBe('array');
  });

  it('is null where the schema has no such key', () => {
    expect(schemaAt(['terminal', 'idd'], root)).toBeNull();
    expect(schemaAt(['terminal', 'id', 'deeper'], root)).toBeNull();
  });

  it('lists the keys an object may hold, none for a value that is not an object', () => {
    expect(knownKeys(['terminal'], root)).toEqual(['id', 'site', 'timeZone', 'mode']);
    expect(knownKeys([], root)).toContain('scanners');
    expect(knownKeys(['scanners', 3], root)).toEqual(['family', 'path', 'baud', 'address', 'format']);
    expect(knownKeys(['terminal', 'id'], root)).toEqual([]);
  });
});
