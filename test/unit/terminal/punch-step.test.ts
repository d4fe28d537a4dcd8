// The punch step over the real punch policy and outbox (SQLite in a temp folder) with an
// in-memory time authority: each answer of the policy becomes the worker's outcome.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';
import { type CredentialRule, PunchPolicy, type PunchClock } from '../../../src/terminal/punch-policy.js';
import { PunchStep } from '../../../src/terminal/punch-step.js';

let dir: string;
let db: SqliteDatabase;
let outbox: Outbox;
let mono = 1_000_000;
const clock: PunchClock = {
  stamp: () => ({ wallMs: Date.UTC(2026, 2, 2, 7, 58, 0) + (mono - 1_000_000), monoMs: mono, bootId: 'boot-1', trusted: true }),
  lastTrustedMs: () => null,
};

/** The policy as the daemon builds it from the configuration (a toggle terminal in UTC, dedupe 60 s, both within 15 s). */
function step(require: CredentialRule): PunchStep {
  const config = parseConfig({ dataDir: dir, terminal: { id: 'gate-1', mode: 'toggle', timeZone: 'UTC' }, policy: { require } });
  return new PunchStep(PunchPolicy.fromConfig(config, outbox, clock));
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'punch-step-'));
  db = await openAgentDatabase(dir);
  outbox = await Outbox.open(db);
  mono = 1_000_000;
});
afterEach(async () => {
  await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('the punch step', () => {
  it('a punch recorded is punched with its direction (durable in the outbox first); the same person again is a duplicate', async () => {
    const s = step('either');
    expect(await s.verdictFor({ employeeCode: '1042', source: 'finger', score: 55 })).toEqual({ result: 'punched', direction: 'in' });
    const [row] = await outbox.list({});
    expect(row).toMatchObject({ employeeCode: '1042', direction: 'in', source: 'finger', score: 55 });
    mono += 5_000;
    expect(await s.verdictFor({ employeeCode: '1042', source: 'finger', score: 60 })).toEqual({
      result: 'duplicate',
      detail: 'duplicate: already recorded 5s ago',
    });
    expect((await outbox.status()).pending).toBe(1);
  });

  it('both: a badge alone is awaiting the second factor, a finger without it is denied, the pair is one punch', async () => {
    const s = step('both');
    expect(await s.verdictFor({ employeeCode: '7', source: 'finger', score: 50 })).toEqual({
      result: 'denied',
      detail: 'present the badge first, then the finger or eye within 15 s',
    });
    expect(await s.verdictFor({ employeeCode: '7', source: 'badge', score: 1 })).toEqual({
      result: 'awaiting',
      detail: 'badge taken: the finger or eye within 15 s',
    });
    expect((await outbox.status()).pending).toBe(0);
    mono += 3_000;
    expect(await s.verdictFor({ employeeCode: '7', source: 'finger', score: 50 })).toEqual({ result: 'punched', direction: 'in' });
    expect((await outbox.list({}))[0]).toMatchObject({ employeeCode: '7', source: 'badge+finger' });
  });

  it('biometric: a badge is denied with the rule in words', async () => {
    expect(await step('biometric').verdictFor({ employeeCode: '7', source: 'badge', score: 1 })).toEqual({
      result: 'denied',
      detail: 'this terminal takes a finger or an eye, not a badge',
    });
  });

  it('a punch that cannot be recorded is refused with the code and message, never thrown to the worker', async () => {
    const s = step('either');
    const bad = await s.verdictFor({ employeeCode: 'not a code!', source: 'finger', score: 50 });
    expect(bad).toMatchObject({ result: 'refused', detail: expect.stringMatching(/^POLICY_BAD_PUNCH: /) });
    await db.close();
    const closed = await s.verdictFor({ employeeCode: '1042', source: 'finger', score: 50 });
    expect(closed.result).toBe('refused');
    expect(closed.detail).toMatch(/^[A-Z_]+: /);
  });
});
