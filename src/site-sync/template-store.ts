/**
 * The template cache as the site sync sees it: one record per person, versioned by the person's
 * version in the cache (person_versions), built from and applied to the encrypted cache. Applying
 * and deleting change the templates and the version together, in one transaction.
 */
import type { TemplateModality } from '../core/modality.js';
import type { TemplateCache, TemplateFormat } from '../store/template-cache.js';
import { nextVersion, type SiteTemplateRecord, type SiteTemplateStore } from './site-sync.js';

export function siteStore(cache: TemplateCache): SiteTemplateStore {
  const version = (r: SiteTemplateRecord, digest: string) => ({
    employeeCode: r.employeeCode,
    version: r.version,
    digest,
    origin: r.origin,
    updatedAt: r.updatedAt,
  });
  return {
    async versionOf(employeeCode) {
      const v = await cache.personVersion(employeeCode);
      return v ? { version: v.version, deleted: v.deleted, digest: v.digest } : null;
    },
    apply: (record, digest) =>
      cache.replacePerson(
        version(record, digest),
        record.templates.map((t) => ({
          id: t.id,
          employeeCode: record.employeeCode,
          modality: t.modality as TemplateModality,
          position: t.position ?? 'unknown',
          format: t.format as TemplateFormat,
          data: Buffer.from(t.data, 'base64'),
          quality: t.quality,
          sensorModel: t.sensorModel,
          createdAt: t.createdAt,
          sourceTerminal: record.origin,
        })),
      ),
    remove: (record, digest) => cache.deletePerson(version(record, digest)),
    async note(record, digest) {
      await cache.notePersonVersion(version(record, digest));
    },
  };
}

/**
 * A person's templates as a site record (after a local enrolment), or null when there are none.
 * Its version is above what this terminal holds for the person (a deletion included).
 */
export async function siteRecordOf(
  cache: TemplateCache,
  employeeCode: string,
  origin: string,
  now = Date.now(),
): Promise<SiteTemplateRecord | null> {
  const templates = [];
  let newest = 0;
  for await (const t of cache.listTemplates({ employeeCode })) {
    templates.push({
      id: t.id,
      modality: t.modality,
      position: t.position,
      format: t.format,
      quality: t.quality,
      sensorModel: t.sensorModel,
      createdAt: t.createdAt,
      data: Buffer.from(t.data).toString('base64'),
    });
    newest = Math.max(newest, t.version);
  }
  if (templates.length === 0) return null;
  const held = await cache.personVersion(employeeCode);
  const version = nextVersion(held, now, newest);
  return { v: 2, employeeCode, version, updatedAt: new Date(now).toISOString(), origin, deleted: false, templates };
}
