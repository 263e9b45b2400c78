import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/core/contracts/events.js';
import type { Store } from '../../../src/core/contracts/store.js';
import { createStore } from '../../../src/storage/store.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';

/** `reads.recentConversations`: what a person's home page lists (PGlite, and Postgres with TEST_DATABASE_URL). */

let database: TestDatabase;
let store: Store;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());

let sequence = 0;

/** One message by `userId` in channel `channel` of Slack workspace T1, stored as the intake stores it. */
async function wrote(userId: string, channel: string, text: string): Promise<void> {
  sequence += 1;
  const key = `slack:T1:${channel}:main`;
  const message: InboundMessage = {
    kind: 'message',
    address: { platform: 'slack', workspace: 'T1', channel, thread: 'main' },
    messageId: `${sequence}.0`,
    eventId: `Ev${sequence}`,
    dedupKey: `${channel}:${sequence}`,
    user: { id: userId },
    text,
    isMention: true,
    isDirect: false,
    sentAt: new Date().toISOString(),
  };
  await store.inbox.insert({
    platform: 'slack',
    dedupKey: message.dedupKey,
    conversationKey: key,
    userId,
    payload: message,
  });
  // Rows of one statement share a timestamp: keep them apart so that "newest" is well defined.
  await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('recent conversations', () => {
  it('lists the conversations a person wrote in, newest first, once each, with their latest first line', async () => {
    await wrote('U1', 'C1', 'first question');
    await wrote('U1', 'C2', 'other channel');
    await wrote('U2', 'C3', 'someone else');
    await wrote('U1', 'C1', 'deploy payments\nplease, now');
    await store.inbox.insert({
      platform: 'slack',
      dedupKey: 'approval:resume-1',
      conversationKey: 'slack:T1:C4:main',
      userId: 'U1',
      payload: { kind: 'resume', batchId: 'resume-1' },
    });

    const recent = await store.reads.recentConversations({ platform: 'slack', id: 'U1' }, 5);
    expect(recent.map((item) => [item.address.channel, item.firstLine])).toEqual([
      ['C1', 'deploy payments'],
      ['C2', 'other channel'],
    ]);
    expect(recent[0]?.address).toEqual({ platform: 'slack', workspace: 'T1', channel: 'C1', thread: 'main' });
    expect(await store.reads.recentConversations({ platform: 'slack', id: 'U1' }, 1)).toHaveLength(1);
    expect(await store.reads.recentConversations({ platform: 'feishu', id: 'U1' }, 5)).toEqual([]);
  });
});
