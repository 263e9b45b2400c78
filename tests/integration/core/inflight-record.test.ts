import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/contracts/store.js';
import { InflightRecord } from '../../../src/core/turn/inflight-record.js';
import { createStore } from '../../../src/storage/store.js';
import { databaseKind, openTestDatabase, type TestDatabase } from '../../helpers/database.js';

let database: TestDatabase;
let store: Store;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());

const address = { platform: 'slack' as const, workspace: 'T1', channel: 'C1', thread: '1.0' };
const delivered = { text: 'All services are healthy.', messages: [] };

/** The real store, counting the record's writes. */
function countingStore(): { store: Store; writes: () => number } {
  let writes = 0;
  const conversations = Object.create(store.conversations) as Store['conversations'];
  conversations.setInflight = (id, inflight) => {
    writes += 1;
    return store.conversations.setInflight(id, inflight);
  };
  return { store: { ...store, conversations }, writes: () => writes };
}

async function recordFor(key: string, counting: Store) {
  const conversation = await store.conversations.ensure(key, address);
  const record = new InflightRecord(counting, conversation.id, {
    turnId: `turn-${key}`,
    eventIds: [1],
    replyMessageIds: [],
  });
  return { record, stored: async () => (await store.conversations.find(key))?.inflight };
}

describe(`a turn's inflight record on ${databaseKind}`, () => {
  it('ends with every change when a message is recorded while the answer is', async () => {
    const { record, stored } = await recordFor('slack:T1:C1:answer-then-message', store);
    record.deliver(delivered);
    await Promise.all([record.save(), record.messageCreated('1700000000.000200'), record.save()]);
    expect(await stored()).toMatchObject({ replyMessageIds: ['1700000000.000200'], delivered });
  });

  it('skips a write whose change rode along with an earlier one', async () => {
    const counting = countingStore();
    const { record, stored } = await recordFor('slack:T1:C1:message-then-answer', counting.store);
    const message = record.messageCreated('1700000000.000300');
    record.deliver(delivered);
    await Promise.all([message, record.save()]);
    expect(await stored()).toMatchObject({ replyMessageIds: ['1700000000.000300'], delivered });
    expect(counting.writes()).toBe(1);
    await record.save();
    expect(counting.writes()).toBe(1);
  });
});
