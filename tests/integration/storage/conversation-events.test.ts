import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../../src/core/contracts/conversation-events.js';
import type { Store } from '../../../src/core/contracts/store.js';
import { createStore } from '../../../src/storage/store.js';
import { openTestDatabase, type TestDatabase, testDatabaseUrl } from '../../helpers/database.js';

/**
 * The HTTP API's event log on Postgres, where appends run on several connections: a follower reads
 * `id > last`, so an event must never become visible after one with a higher id in its conversation.
 */

let database: TestDatabase;
let store: Store;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());

const delta = (text: string): ConversationEvent => ({ type: 'delta', text });

describe.runIf(testDatabaseUrl)('conversation events on postgres', () => {
  it('makes a later append wait for an earlier one still in its transaction, so none is skipped', async () => {
    const key = `api:ordered:${Date.now()}`;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstAppended = () => {};
    const appendedInside = new Promise<void>((resolve) => {
      firstAppended = resolve;
    });
    const first = store.transaction(async (tx) => {
      const ids = await tx.conversationEvents.append(key, [delta('first')]);
      firstAppended();
      await gate;
      return ids;
    });
    await appendedInside;
    const second = store.conversationEvents.append(key, [delta('second')]);
    // Given the time to commit if nothing holds it back, the second must still be invisible: a follower
    // reading now and then after the newest id it saw would never see the first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const early = await store.conversationEvents.listAfter(key, 0, 10);
    release();
    const ids = [...(await first), ...(await second)];
    const late = await store.conversationEvents.listAfter(key, early.at(-1)?.id ?? 0, 10);

    expect([...early, ...late].map((row) => row.event)).toEqual([delta('first'), delta('second')]);
    expect([...early, ...late].map((row) => row.id)).toEqual(ids);
  });
});
