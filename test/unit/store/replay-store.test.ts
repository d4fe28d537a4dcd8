import { describe, expect, it } from 'vitest';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { ReplayStore } from '../../../src/store/replay-store.js';
import { agentDatabasePerTest } from './agent-db.fixture.js';

const t = agentDatabasePerTest('replay-store-');

describe('the replay store', () => {
  it('keeps what was accepted across a reopen of the file', async () => {
    const store = await ReplayStore.open(t.db);
    await store.record({ kid: 'site', transaction: 'tx-1', ts: 1000 }, 0);
    await store.record({ kid: 'alice', transaction: 'tx-1', ts: 1500 }, 0);
    await t.db.close();
    t.db = await openAgentDatabase(t.dir);
    const again = await ReplayStore.open(t.db);
    expect(await again.load()).toEqual({
      accepted: [
        { kid: 'site', transaction: 'tx-1', ts: 1000 },
        { kid: 'alice', transaction: 'tx-1', ts: 1500 },
      ],
      floors: {},
    });
  });

  it('forgets what was signed before the cut, raising each key floor to the newest it forgot (never lowering it)', async () => {
    const store = await ReplayStore.open(t.db);
    await store.record({ kid: 'site', transaction: 'a', ts: 1000 }, 0);
    await store.record({ kid: 'site', transaction: 'b', ts: 2000 }, 0);
    await store.record({ kid: 'alice', transaction: 'c', ts: 1200 }, 0);
    await store.record({ kid: 'site', transaction: 'd', ts: 5000 }, 2500);
    expect(await store.load()).toEqual({
      accepted: [{ kid: 'site', transaction: 'd', ts: 5000 }],
      floors: { site: 2000, alice: 1200 },
    });
    // A cut that forgets nothing older than the floor leaves it where it is.
    await store.record({ kid: 'site', transaction: 'e', ts: 1500 }, 0);
    await store.record({ kid: 'site', transaction: 'f', ts: 6000 }, 1600);
    expect((await store.load()).floors).toEqual({ site: 2000, alice: 1200 });
  });

  it('records the same transaction twice as once', async () => {
    const store = await ReplayStore.open(t.db);
    await store.record({ kid: 'site', transaction: 'a', ts: 1000 }, 0);
    await store.record({ kid: 'site', transaction: 'a', ts: 1000 }, 0);
    expect((await store.load()).accepted).toHaveLength(1);
  });
});
