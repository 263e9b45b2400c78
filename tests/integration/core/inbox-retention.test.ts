import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { inboundEvents } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

let model: FakeModelServer;
let app: TestButler;
let platform: RecordingAdapter;

/** Long enough that the event is still there right after its turn, on a slow machine. */
const retentionSeconds = 3;

beforeAll(async () => {
  model = await startFakeModelServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', BUTLER_API_TOKEN: 'sk-test' },
    config: { worker: { inboxRetentionHours: retentionSeconds / 3600 } },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});

async function eventRows(dedupKey: string) {
  return app.butler.database.db
    .select({ status: inboundEvents.status })
    .from(inboundEvents)
    .where(eq(inboundEvents.dedupKey, dedupKey));
}

describe(`inbox retention on ${databaseKind}`, () => {
  it('deletes an answered event once its retention has passed, keeping the conversation', {
    timeout: 30_000,
  }, async () => {
    model.enqueue({ text: 'Noted.' });
    const message = inboundMessage({ text: 'remember the deploy window' });
    await app.butler.service.accept(message);
    await app.settle();
    expect(await eventRows(message.dedupKey)).toEqual([{ status: 'done' }]);

    const deadline = Date.now() + 15_000;
    while ((await eventRows(message.dedupKey)).length > 0) {
      if (Date.now() > deadline) throw new Error('the finished event was never pruned');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const conversation = await app.butler.store.conversations.find(encodeConversationKey(message.address));
    const history = conversation ? await app.butler.store.conversations.window(conversation.id) : [];
    expect(history.map((entry) => entry.content)).toEqual(['remember the deploy window', 'Noted.']);
  });
});
