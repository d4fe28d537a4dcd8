// Site template sync between two real `edge-agent run` daemons over a real broker (Mosquitto where
// installed): same site, same site key, different data folders and terminal ids. A person's
// templates published to the site (by a third terminal of the site, an enrolment station here:
// the same SiteTemplateSync and record a terminal publishes after an enrolment) land, decrypted,
// in both daemons' encrypted caches; a newer record replaces them, an older one is skipped; a
// `delete-user` request over MQTT to one daemon removes them on both (and off the module). Then a
// person enrolled on a third terminal of the site (`edge-agent enroll --simulate`) reaches both
// running terminals and punches on the second one's module. Records carry versions: a stale one is
// refused; the deletion is a sealed tombstone that stays retained.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { runCli } from '../helpers/cli.js';
import {
  daemonStatus,
  moduleTemplateOf,
  startAgent,
  startSimulatedModule,
  stopChild,
  terminalDir,
  until,
  type SimulatedModule,
  type TerminalDir,
} from '../helpers/agent.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { parseRecord, SiteTemplateSync, type SiteTemplateRecord } from '../../src/site-sync/site-sync.js';
import { openSiteRecord } from '../../src/site-sync/site-crypto.js';
import { signedRequest } from '../../src/ops/ops-client.js';
import { nextMessage } from '../helpers/mqtt.js';
import { setLogLevel } from '../../src/core/logger.js';
import { has } from '../helpers/system.js';

let broker: TestBroker;
let sim: SimulatedModule | null = null;
const agents: ChildProcess[] = [];
beforeAll(async () => {
  setLogLevel('ops:*', 'warn'); // the station's own sync in this process
  broker = await startBroker();
});
afterAll(async () => {
  for (const a of agents) await stopChild(a);
  await sim?.stop();
  await broker.stop();
});

const SITE = 'plant-sync';

/** The person's templates in a terminal's cache (read beside the running daemon; WAL allows it). */
async function cachedTemplates(
  dir: TerminalDir,
  employeeCode: string,
): Promise<Array<{ id: string; format: string; data: string; sourceTerminal: string | null }>> {
  const db = await openAgentDatabase(dir.dataDir);
  try {
    const cache = await TemplateCache.open(db, { key: dir.templateKey });
    const out = [];
    for await (const t of cache.listTemplates({ employeeCode }))
      out.push({ id: t.id, format: t.format, data: Buffer.from(t.data).toString('base64'), sourceTerminal: t.sourceTerminal });
    return out;
  } finally {
    await db.close();
  }
}

/** The template ids of a person placed in a module slot of a terminal (its slot map, read beside the daemon). */
async function placedOnModules(dir: TerminalDir, employeeCode: string): Promise<string[]> {
  const db = await openAgentDatabase(dir.dataDir);
  try {
    const rows = await db.all<{ template_id: string }>('SELECT template_id FROM module_slots WHERE employee_code = ? ORDER BY slot', [
      employeeCode,
    ]);
    return rows.map((r) => r.template_id);
  } finally {
    await db.close();
  }
}

function record(employeeCode: string, updatedAt: Date, data: Uint8Array, id: string): SiteTemplateRecord {
  return {
    v: 2,
    employeeCode,
    version: updatedAt.getTime(),
    deleted: false,
    updatedAt: updatedAt.toISOString(),
    origin: 'enroll-station',
    templates: [
      {
        id,
        modality: 'finger',
        position: 'right-index',
        format: 'r30x-char',
        quality: null,
        sensorModel: 'R503',
        createdAt: updatedAt.toISOString(),
        data: Buffer.from(data).toString('base64'),
      },
    ],
  };
}

describe.skipIf(!has('socat'))('site template sync between two running agents, one with a module on a real pty (needs socat)', () => {
  it('applies a published person on both terminals, keeps the newer record, deletes it everywhere through delete-user, and shares a person enrolled on a third terminal', async () => {
    const siteKey = randomBytes(32);
    const opsKey = randomBytes(32);
    const dirs = [terminalDir({ siteKey, extra: { opsKey: opsKey.toString('hex') } }), terminalDir({ siteKey })] as const;
    const ids = ['gate-s1', 'gate-s2'];
    // The second terminal has a fingerprint module (simulated, on a real pty).
    // At 115200 baud: the unknown finger's image goes up for host matching in half the time of 57600.
    sim = await startSimulatedModule(['--baud', '115200']);
    for (let i = 0; i < 2; i++) {
      const scanner = i === 1 ? ['--scanner', `r30x:${sim.device}:115200`] : [];
      agents.push(
        await startAgent([
          '--data',
          dirs[i]!.dataDir,
          '--terminal',
          ids[i]!,
          '--site',
          SITE,
          '--mqtt',
          broker.url,
          '--upstream',
          'mqtt',
          ...scanner,
        ]),
      );
    }
    const capture = async () => (await daemonStatus(dirs[1]!.dataDir)).metrics.capture as { punched: number; unknown: number };
    const scannerReady = async () =>
      ((await daemonStatus(dirs[1]!.dataDir)).info.scanners as Array<{ status: string }>)[0]!.status === 'ready';
    await until(scannerReady, 20_000, 'module of gate-s2 ready');
    const counters = async (i: number) =>
      (await daemonStatus(dirs[i]!.dataDir)).metrics.siteSync as {
        applied: number;
        removed: number;
        skipped: number;
        refused: number;
        errors: number;
      };
    const fingerCount = async (i: number) => ((await daemonStatus(dirs[i]!.dataDir)).info.templates as { finger: number }).finger;
    for (let i = 0; i < 2; i++) expect(await fingerCount(i)).toBe(0);

    const station = new SiteTemplateSync({
      url: broker.url,
      prefix: 'attendance',
      site: SITE,
      terminal: 'enroll-station',
      key: siteKey,
      store: { versionOf: async () => null, apply: async () => true, remove: async () => 0, note: async () => undefined },
    });
    await station.start();
    try {
      const first = await moduleTemplateOf(501);
      const t1 = new Date(Date.now() - 60_000);
      await station.publish(record('E3001', t1, first.data, 'tpl-1'));
      for (let i = 0; i < 2; i++) {
        await until(async () => (await counters(i)).applied === 1, 15_000, `record applied on ${ids[i]}`);
        const held = await cachedTemplates(dirs[i]!, 'E3001');
        expect(held).toEqual([
          { id: 'tpl-1', format: 'r30x-char', data: Buffer.from(first.data).toString('base64'), sourceTerminal: 'enroll-station' },
        ]);
        expect(await fingerCount(i)).toBe(1);
      }

      // A re-enrolment (newer) replaces the person's templates; a stale record is refused.
      const second = await moduleTemplateOf(502);
      await station.publish(record('E3001', new Date(t1.getTime() + 1000), second.data, 'tpl-2'));
      for (let i = 0; i < 2; i++) await until(async () => (await counters(i)).applied === 2, 15_000, `newer record applied on ${ids[i]}`);
      await station.publish(record('E3001', new Date(t1.getTime() - 1000), first.data, 'tpl-0'));
      for (let i = 0; i < 2; i++) {
        await until(async () => (await counters(i)).refused === 1, 15_000, `older record refused on ${ids[i]}`);
        expect((await cachedTemplates(dirs[i]!, 'E3001')).map((t) => [t.id, t.data])).toEqual([
          ['tpl-2', Buffer.from(second.data).toString('base64')],
        ]);
      }
      // The synced person is placed on the second terminal's module: their finger punches there.
      // Placement follows the applied record (debounced, then written to the module over the
      // serial line), so the finger goes on once the slot map holds the newer template.
      await until(
        async () => (await placedOnModules(dirs[1]!, 'E3001')).join(',') === 'tpl-2',
        15_000,
        'newer template placed on the module of gate-s2',
      );
      await sim.send('finger 502');
      await until(async () => (await capture()).punched === 1, 15_000, 'synced person punched on gate-s2');
      await sim.send('lift');
    } finally {
      await station.stop();
    }

    // delete-user over MQTT on the first terminal: gone there and, through the site, on the second.
    const client = await mqtt.connectAsync(broker.url);
    try {
      const answer = new Promise<Record<string, unknown>>((resolve) =>
        client.on('message', (_t, m) => resolve(JSON.parse(m.toString()) as Record<string, unknown>)),
      );
      await client.subscribeAsync(`attendance/${SITE}/gate-s1/res/delete-user`, { qos: 1 });
      const request = signedRequest({
        base: { prefix: 'attendance', site: SITE, terminal: 'gate-s1' },
        command: 'delete-user',
        args: { employeeCode: 'E3001' },
        key: opsKey,
        kid: 'site',
        transaction: 'tx-del-1',
        ts: Date.now(),
      });
      await client.publishAsync(`attendance/${SITE}/gate-s1/req/delete-user`, request, { qos: 1 });
      expect(await answer).toMatchObject({
        transaction: 'tx-del-1',
        status: 'ok',
        result: { employeeCode: 'E3001', templatesRemoved: 1, deletedAcrossSite: true },
      });
    } finally {
      await client.endAsync();
    }
    await until(async () => (await counters(1)).removed >= 1, 15_000, 'deletion applied on gate-s2');
    for (let i = 0; i < 2; i++) {
      expect(await fingerCount(i)).toBe(0);
      expect(await cachedTemplates(dirs[i]!, 'E3001')).toEqual([]);
    }
    // Deleted everywhere means off the module too: the same finger is unknown on the second terminal now.
    await until(async () => (await placedOnModules(dirs[1]!, 'E3001')).length === 0, 15_000, 'person taken off the module of gate-s2');
    await sim.send('finger 502');
    await until(async () => (await capture()).unknown === 1, 25_000, 'deleted person no longer known on gate-s2');
    await sim.send('lift');
    expect((await capture()).punched).toBe(1);
    // The broker keeps the sealed tombstone, not the person's templates: a terminal joining later deletes them too.
    const tomb = await nextMessage(broker.url, `attendance/${SITE}/templates/E3001`);
    expect(parseRecord(openSiteRecord(siteKey, SITE, 'E3001', Buffer.from(tomb)), 'E3001')).toMatchObject({
      deleted: true,
      templates: [],
      origin: 'gate-s1',
    });

    // Enrolled on a third terminal of the site (its agent stopped, so the enrolment runs in the
    // command: simulated scanners, extraction, module template), published, applied on both
    // running terminals, placed on the second one's module, and that finger punches there.
    const third = terminalDir({ siteKey });
    const enrolled = await runCli(
      [
        'enroll',
        'E3002',
        '--simulate',
        '--present',
        '1001',
        '--data',
        third.dataDir,
        '--terminal',
        'gate-s3',
        '--site',
        SITE,
        '--mqtt',
        broker.url,
      ],
      { timeoutMs: 90_000 },
    );
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    expect(enrolled.stdout).toMatch(/published to site plant-sync/);
    for (let i = 0; i < 2; i++) {
      const held = await until(
        async () => {
          const t = await cachedTemplates(dirs[i]!, 'E3002');
          return t.length > 0 ? t : null;
        },
        15_000,
        `enrolment of E3002 applied on ${ids[i]}`,
      );
      expect(held.every((t) => t.sourceTerminal === 'gate-s3')).toBe(true);
      expect(held.map((t) => t.format).sort()).toEqual(['iso19794-2', 'iso19794-2', 'iso19794-2', 'r30x-char']);
    }
    await until(async () => (await placedOnModules(dirs[1]!, 'E3002')).length === 1, 15_000, 'E3002 placed on the module of gate-s2');
    await sim.send('finger 1001');
    await until(async () => (await capture()).punched === 2, 15_000, 'E3002 punched on gate-s2');
    await sim.send('lift');

    for (const a of agents.splice(0)) expect(await stopChild(a)).toBe(0);
  }, 150_000);
});
