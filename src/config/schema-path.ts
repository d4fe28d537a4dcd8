/**
 * Walks a zod schema by a path of keys: which schema holds the value at `terminal.id` or
 * `scanners.0.family`, and which keys an object there may have. The environment mapping asks it
 * whether a key is a string; the explanations ask it for the known keys of a did-you-mean.
 */

/** A zod schema as far as walking it needs: its definition's type and fields. */
export type AnySchema = { _zod: { def: Record<string, unknown> & { type: string } } };

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  while (['default', 'nullable', 'optional', 'prefault', 'readonly'].includes(s._zod.def.type)) s = s._zod.def.innerType as AnySchema;
  return s;
}

/** The schema of the value at a dotted path (array indexes allowed) under `root`, or null when there is none. */
export function schemaAt(path: ReadonlyArray<string | number>, root: AnySchema): AnySchema | null {
  let s: AnySchema | null = unwrap(root);
  for (const p of path) {
    if (!s) return null;
    const def: Record<string, unknown> & { type: string } = s._zod.def;
    if (def.type === 'object') s = (def.shape as Record<string, AnySchema>)[String(p)] ?? null;
    else if (def.type === 'array') s = def.element as AnySchema;
    else if (def.type === 'record') s = def.valueType as AnySchema;
    else return null;
    if (s) s = unwrap(s);
  }
  return s;
}

/** The keys an object at `path` under `root` may hold. */
export function knownKeys(path: ReadonlyArray<string | number>, root: AnySchema): string[] {
  const s = schemaAt(path, root);
  return s && s._zod.def.type === 'object' ? Object.keys(s._zod.def.shape as object) : [];
}
