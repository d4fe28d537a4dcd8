/**
 * The site's index of template records: one retained message on `<prefix>/<site>/templates-index`,
 * sealed under the site key like a record (site-crypto.ts, additional data naming the index, which
 * no employee code can), holding every person's newest version (tombstones included):
 *
 *   {"v": 1, "versions": {"E1001": 1767000000000, ...}}
 *
 * Why: a broker queues only so many messages per client (Mosquitto: 1,000), so a terminal that
 * subscribes to `templates/+` under 10,000 retained junk records receives a thousand of them and
 * never the real ones. The index is one topic that junk cannot crowd; from it a terminal knows
 * what exists and asks for each record it lacks by its own topic, a page at a time.
 *
 * The index only grows (per person the larger version wins), so every terminal merges what it
 * receives with what it knows and publishes the merge when the retained one lacks something: the
 * terminals converge on one index whatever the order, and a replayed older index loses nothing.
 */
import { z } from 'zod';
import { AgentError } from '../core/errors.js';
import { openSiteRecord, sealSiteRecord } from './site-crypto.js';

/** The name sealed into the index's additional data: U+0000 is in no employee code. */
const INDEX_NAME = '\u0000index';
const MAX_ENTRIES = 100_000;

const IndexSchema = z.object({
  v: z.literal(1),
  versions: z.record(z.string().min(1).max(512), z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)),
});

export function sealSiteIndex(key: Buffer, site: string, versions: ReadonlyMap<string, number>): Buffer {
  return sealSiteRecord(key, site, INDEX_NAME, Buffer.from(JSON.stringify({ v: 1, versions: Object.fromEntries(versions) })));
}

/** The versions of a sealed index; throws OPS_SYNC_* when it is not one sealed under `key` for `site`. */
export function openSiteIndex(key: Buffer, site: string, payload: Buffer): Map<string, number> {
  const plaintext = openSiteRecord(key, site, INDEX_NAME, payload);
  let json: unknown;
  try {
    json = JSON.parse(plaintext.toString('utf8'));
  } catch {
    throw new AgentError('OPS_SYNC_MALFORMED', 'the site index is not JSON', {});
  }
  const r = IndexSchema.safeParse(json);
  if (!r.success || Object.keys(r.data.versions).length > MAX_ENTRIES)
    throw new AgentError('OPS_SYNC_MALFORMED', 'the site index does not have the v1 shape', {});
  return new Map(Object.entries(r.data.versions));
}

/** Merges `from` into `into` (the larger version wins); true when `into` lacked something of `from`. */
export function mergeVersions(into: Map<string, number>, from: ReadonlyMap<string, number>): boolean {
  let grew = false;
  for (const [code, version] of from) {
    if ((into.get(code) ?? 0) < version) {
      into.set(code, version);
      grew = true;
    }
  }
  return grew;
}
