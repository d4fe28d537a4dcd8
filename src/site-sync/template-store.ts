/**
 * The template cache as the site sync sees it: one record per person, versioned by
 * (updatedAt, origin), built from and applied to the encrypted cache.
 */
import type { TemplateCache, TemplateFormat } from '../store/template-cache.js';
import type { SiteTemplateRecord, SiteTemplateStore } from './site-sync.js';

export function siteStore(cache: TemplateCache): SiteTemplateStore {
  return {
    async versionOf(employeeCode) {
      const metas = await cache.listTemplateMeta({ employeeCode });
      if (metas.length === 0) return null;
      const newest = metas.reduce((a, b) => (b.version > a.version ? b : a));
      return { updatedAt: new Date(newest.version).toISOString(), origin: newest.sourceTerminal ?? '' };
    },
    async apply(record: SiteTemplateRecord) {
      const version = Date.parse(record.updatedAt);
      await cache.deleteUser(record.employeeCode);
      await cache.upsertUser({ employeeCode: record.employeeCode });
      await cache.addTemplates(
        record.templates.map((t) => ({
          id: t.id,
          employeeCode: record.employeeCode,
          modality: t.modality as 'finger' | 'iris' | 'embedding',
          position: t.position ?? 'unknown',
          format: t.format as TemplateFormat,
          data: Buffer.from(t.data, 'base64'),
          quality: t.quality,
          sensorModel: t.sensorModel,
          createdAt: t.createdAt,
          sourceTerminal: record.origin,
          version,
        })),
      );
    },
    remove: (employeeCode) => cache.deleteUser(employeeCode),
  };
}

/** A person's templates as a site record (after a local enrolment), or null when there are none. */
export async function siteRecordOf(cache: TemplateCache, employeeCode: string): Promise<SiteTemplateRecord | null> {
  const templates = [];
  let version = 0;
  let origin = '';
  for await (const t of cache.listTemplates({ employeeCode })) {
    templates.push({ id: t.id, modality: t.modality, position: t.position, format: t.format, quality: t.quality, sensorModel: t.sensorModel, createdAt: t.createdAt, data: Buffer.from(t.data).toString('base64') });
    if (t.version >= version) {
      version = t.version;
      origin = t.sourceTerminal ?? '';
    }
  }
  if (templates.length === 0) return null;
  return { v: 1, employeeCode, updatedAt: new Date(version).toISOString(), origin, templates };
}
