/**
 * A terminal's encrypted template cache at full size for `bench:scale` (section templates):
 * `fingers` ISO 19794-2 finger templates (one finger of each person, first impressions of seeded
 * synthetic fingers) and `irises` iris codes (both eyes of irises / 2 people, seeded synthetic
 * eyes), stored through the real TemplateCache (AES-256-GCM per row), and probes for mated
 * searches: another impression of an enrolled finger, another capture of an enrolled eye.
 */
import { encodeIso19794_2 } from '../../src/biometrics/finger/iso19794-2.js';
import { encodeIrisTemplate } from '../../src/biometrics/iris/iris-code.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache, type NewTemplate } from '../../src/store/template-cache.js';
import { impression, impressionTemplate, syntheticFinger } from '../../src/synthetic/finger.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../src/synthetic/iris-code.js';

export interface FilledCache {
  fingerProbes: Array<{ employeeCode: string; template: Uint8Array }>;
  irisProbes: Array<{ employeeCode: string; template: Uint8Array }>;
}

const FINGER_SEED = 7_000_000;
const IRIS_SEED = 9_000_000;

export async function fillTemplateCache(
  dataDir: string,
  key: Buffer,
  options: { fingers: number; irises: number; probes: number; log?: (line: string) => void },
): Promise<FilledCache> {
  const db = await openAgentDatabase(dataDir);
  const out: FilledCache = { fingerProbes: [], irisProbes: [] };
  try {
    const cache = await TemplateCache.open(db, { key });
    const fingerProbeAt = new Set(
      Array.from({ length: options.probes }, (_, s) => Math.floor(((s + 0.5) / options.probes) * options.fingers)),
    );
    const irisProbeAt = new Set(
      Array.from({ length: options.probes }, (_, s) => Math.floor(((s + 0.5) / options.probes) * options.irises)),
    );
    let batch: NewTemplate[] = [];
    const flush = async () => {
      if (batch.length) await cache.addTemplates(batch);
      batch = [];
    };
    for (let i = 0; i < options.fingers; i++) {
      const finger = syntheticFinger(FINGER_SEED + i);
      const employeeCode = `F${i}`;
      batch.push({
        employeeCode,
        modality: 'finger',
        position: 'right-index',
        format: 'iso19794-2',
        data: encodeIso19794_2(impressionTemplate(impression(finger, 0))),
      });
      if (fingerProbeAt.has(i))
        out.fingerProbes.push({ employeeCode, template: encodeIso19794_2(impressionTemplate(impression(finger, 1))) });
      if (batch.length === 1000) await flush();
      if ((i + 1) % 2500 === 0) options.log?.(`  ${i + 1} of ${options.fingers} finger templates stored`);
    }
    for (let i = 0; i < options.irises; i++) {
      const eye = syntheticIrisEye(IRIS_SEED + i);
      const employeeCode = `P${i >> 1}`;
      batch.push({
        employeeCode,
        modality: 'iris',
        position: i % 2 ? 'right' : 'left',
        format: 'iris-code-v1',
        data: encodeIrisTemplate(syntheticIrisSample(eye, 0).code),
      });
      if (irisProbeAt.has(i)) out.irisProbes.push({ employeeCode, template: encodeIrisTemplate(syntheticIrisSample(eye, 100 + i).code) });
      if (batch.length === 1000) await flush();
      if ((i + 1) % 25_000 === 0) options.log?.(`  ${i + 1} of ${options.irises} iris codes stored`);
    }
    await flush();
  } finally {
    await db.close();
  }
  return out;
}
