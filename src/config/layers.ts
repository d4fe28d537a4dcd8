/**
 * The raw layers of a configuration (the file, the environment, the flags) are plain objects
 * before validation: these set a key at a path in one, ask whether one holds a key, and merge one
 * over another.
 */

/** A mapping of keys to values: not null, not a list, not a Buffer. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

/** Deep merge: objects merge, everything else (arrays included) replaces. */
export function mergeConfig(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? mergeConfig(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

/** Sets `value` at `path` in `obj`, making (or replacing with) a mapping at each level above it. */
export function setPath(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = obj;
  for (const key of path.slice(0, -1)) {
    const next = isPlainObject(node[key]) ? node[key] : {};
    node[key] = next;
    node = next;
  }
  node[path[path.length - 1]!] = value;
}

/** True when `obj` holds a value (null included) at the dotted path; list indexes are keys too. */
export function hasPath(obj: Record<string, unknown>, dotted: string): boolean {
  let node: unknown = obj;
  for (const p of dotted.split('.')) {
    if (!isPlainObject(node) && !Array.isArray(node)) return false;
    if (!(p in (node as object))) return false;
    node = (node as Record<string, unknown>)[p];
  }
  return true;
}
