import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { conversationLeases, inboundEvents } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * One heartbeat renews every lease a process holds. A lease of 1.5 s is renewed every 500 ms, so a turn of
 * 4 s outlives it: without renewal the process's other loops would claim the conversation again and answer twice.
 */
describe(`conversation leases on ${databaseKind}`, () => {
  let model: FakeModelServer;
  let app: TestButler;
  const platform = new RecordingAdapter();
  const words = Array.from({ length: 10 }, (_, index) => `word${index}`);
  const chunks = words.map((word) => `${word} `);
  const story = { text: chunks.join(''), chunks, chunkDelayMs: 400 };
  const address = (thread: string): ConversationAddress => ({
    platform: 'console',
    workspace: 'local',
    channel: 'ops',
    thread,
  });

  beforeAll(async () => {
    model = await startFakeModelServer();
    app = await startTestButler({
      env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
      adapters: [platform],
      config: { worker: { leaseSeconds: 1.5 } },
    });
    // The first turn of a process loads what later turns reuse; the leases below are measured after it.
    await app.butler.service.accept(inboundMessage({ text: 'hello', address: address('warm-up') }));
    await app.settle();
    platform.replies.length = 0;
    model.reset();
  });
  afterEach(() => {
    platform.replies.length = 0;
    model.reset();
  });
  afterAll(async () => {
    await app.close();
    await model.close();
  });

  const attempts = async (at: ConversationAddress) => {
    const rows = await app.butler.database.db
      .select({ attempts: inboundEvents.attempts })
      .from(inboundEvents)
      .where(eq(inboundEvents.conversationKey, encodeConversationKey(at)));
    return rows.map((row) => row.attempts);
  };

  it('keeps the lease of a turn that runs longer than it, for every conversation at once', async () => {
    model.setFallback(story);
    const addresses = ['a', 'b', 'c'].map(address);
    for (const at of addresses)
      await app.butler.service.accept(inboundMessage({ text: 'a story', address: at }));
    await app.settle(20_000);

    expect(platform.replies.map((reply) => reply.finalText)).toEqual([story.text, story.text, story.text]);
    expect(model.requests).toHaveLength(3);
    for (const at of addresses) expect(await attempts(at)).toEqual([1]);
  });

  it.each([
    ['another process took it', 'worker-elsewhere'],
    ['it lapsed while the process stalled', undefined],
  ])('stops a turn whose lease %s, and answers in its message once', async (_, owner) => {
    model.enqueue(story, { text: 'Second attempt.' });
    const at = address(`lapsed-${owner ?? 'here'}`);
    await app.butler.service.accept(inboundMessage({ text: 'a story', address: at }));
    await waitFor(() => platform.replies[0]?.deltas.length);
    await app.butler.database.db
      .update(conversationLeases)
      .set({ ...(owner ? { owner } : {}), expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(conversationLeases.conversationKey, encodeConversationKey(at)));
    await app.settle(20_000);

    // The first attempt was stopped mid-stream; the second took over its message and finished.
    expect(model.requests).toHaveLength(2);
    const [first, second] = platform.replies;
    expect(first?.finishedAt).toBeUndefined();
    expect(first?.deltas.length).toBeLessThan(words.length);
    expect(second?.resume).toEqual(first?.messageIds);
    expect(second?.finalText).toBe('Second attempt.');
    expect(platform.replies).toHaveLength(2);
    expect(await attempts(at)).toEqual([2]);
  });
});
