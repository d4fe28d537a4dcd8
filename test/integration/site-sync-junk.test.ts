// Site sync that junk cannot drown, on a real broker (Mosquitto where installed: it queues at most
// 1,000 messages per client, which is what drowned new terminals): real employees are published
// before and after 10,000 retained junk records under `templates/+`; a terminal that joins
// afterwards, with a real SQLite template cache, holds every real employee, and says how many it
// lacked until it did (`missing`, the terminal's health reason).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { until } from '../helpers/agent.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { siteStore } from '../../src/site-sync/template-store.js';
import { SiteTemplateSync, type SiteTemplateRecord } from '../../src/site-sync/site-sync.js';
import { setLogLevel } from '../../src/core/logger.js';

const SITE = 'plant-junk';
const JUNK = 10_000;
let broker: TestBroker;
const siteKey = randomBytes(32);
const dbs: Array<Awaited<ReturnType<typeof openAgentDatabase>>> = [];
const syncs: SiteTemplateSync[] = [];

beforeAll(async () => {
  setLogLevel('ops:*', 'error');
  broker = await startBroker();
});
afterAll(async () => {
  for (const s of syncs) await s.stop();
  for (const db of dbs) await db.close();
  await broker.stop();
});

async function terminal(id: string): Promise<{ sync: SiteTemplateSync; cache: TemplateCache }> {
  const db = await openAgentDatabase(mkdtempSync(join(tmpdir(), `site-junk-${id}-`)));
  dbs.push(db);
  const cache = await TemplateCache.open(db, { key: randomBytes(32) });
  const sync = new SiteTemplateSync({
    url: broker.url,
    prefix: 'attendance',
    site: SITE,
    terminal: id,
    key: siteKey,
    store: siteStore(cache),
  });
  syncs.push(sync);
  await sync.start();
  return { sync, cache };
}

function record(employeeCode: string, version: number): SiteTemplateRecord {
  const at = new Date(version).toISOString();
  return {
    v: 2,
    employeeCode,
    version,
    deleted: false,
    updatedAt: at,
    origin: 'enroll-station',
    templates: [
      {
        id: `tpl-${employeeCode}`,
        modality: 'badge',
        position: null,
        format: 'badge-hmac-sha256',
        quality: null,
        sensorModel: null,
        createdAt: at,
        data: randomBytes(32).toString('base64'),
      },
    ],
  };
}

describe('site sync under retained junk', () => {
  it('a terminal that joins after 10,000 junk records holds every real employee', async () => {
    const station = await terminal('enroll-station');
    const before = ['E1001', 'E1002', 'E1003'];
    const after = ['E2001', 'E2002', 'E2003'];
    const now = Date.now();
    for (const [i, code] of before.entries()) await station.sync.publish(record(code, now + i));
    // 10,000 retained junk records in bulk (QoS 0), the last one at QoS 1: the broker holds them all once it is acknowledged.
    const attacker = await mqtt.connectAsync(broker.url, { clean: true });
    for (let i = 0; i < JUNK; i++) attacker.publish(`attendance/${SITE}/templates/J${i}`, `{"v":1,"junk":${i}}`, { qos: 0, retain: true });
    await attacker.publishAsync(`attendance/${SITE}/templates/J-last`, 'junk', { qos: 1, retain: true });
    await attacker.endAsync();
    for (const [i, code] of after.entries()) await station.sync.publish(record(code, now + 10 + i));

    const joiner = await terminal('gate-new');
    const held = async () => {
      const out: string[] = [];
      for (const code of [...before, ...after]) if (await siteStore(joiner.cache).versionOf(code)) out.push(code);
      return out;
    };
    await until(async () => (await held()).length === before.length + after.length && joiner.sync.missing === 0, 60_000, 'every employee');
    expect(await held()).toEqual([...before, ...after]);
    expect(joiner.sync.missing).toBe(0);
    // The junk was refused, not applied.
    expect(joiner.sync.counters.applied).toBe(before.length + after.length);
    // A terminal that resyncs gets them again the same way and stays complete.
    await joiner.sync.resync();
    expect(joiner.sync.missing).toBe(0);
  }, 120_000);
});
