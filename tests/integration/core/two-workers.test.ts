import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { testDatabaseUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

// Several processes sharing one database only exist with Postgres (PGlite is single-process).
describe.runIf(testDatabaseUrl)('two Butler processes on one Postgres', () => {
  let model: FakeModelServer;
  const platforms = [new RecordingAdapter(), new RecordingAdapter()];
  const apps: TestButler[] = [];

  beforeAll(async () => {
    model = await startFakeModelServer();
    model.setFallback({
      text: 'one two three four',
      chunks: ['one ', 'two ', 'three ', 'four'],
      chunkDelayMs: 25,
    });
    const env = { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' };
    apps.push(await startTestButler({ env, adapters: [platforms[0] as RecordingAdapter] }));
    apps.push(
      await startTestButler({
        env,
        adapters: [platforms[1] as RecordingAdapter],
        databaseUrl: apps[0]?.databaseUrl ?? '',
      }),
    );
  });
  afterAll(async () => {
    await apps[1]?.close();
    await apps[0]?.close();
    await model.close();
  });

  it('runs one turn per conversation at a time and answers every message once', async () => {
    const shared: ConversationAddress = {
      platform: 'console',
      workspace: 'local',
      channel: 'ops',
      thread: 'shared',
    };
    const others = Array.from({ length: 4 }, (_, index) => ({ ...shared, thread: `other-${index}` }));
    const texts: string[] = [];
    for (let index = 0; index < 12; index++) {
      const text = `message ${index}`;
      texts.push(text);
      const app = apps[index % 2] as TestButler;
      await app.butler.service.accept(
        inboundMessage({ text, address: shared, user: { id: `user-${index}` }, isDirect: false }),
      );
      const other = others[index % others.length] as ConversationAddress;
      await app.butler.service.accept(
        inboundMessage({ text: `side ${index}`, address: other, user: { id: `side-${index}` } }),
      );
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    await Promise.all(apps.map((app) => app.settle(20_000)));

    const sharedReplies = platforms
      .flatMap((platform) => platform.replies)
      .filter((reply) => reply.target.address.thread === 'shared')
      .sort((a, b) => a.openedAt - b.openedAt);
    expect(sharedReplies.length).toBeGreaterThan(1);
    for (let index = 1; index < sharedReplies.length; index++) {
      const previous = sharedReplies[index - 1];
      expect(previous?.finishedAt).toBeDefined();
      expect(sharedReplies[index]?.openedAt).toBeGreaterThanOrEqual(
        previous?.finishedAt ?? Number.POSITIVE_INFINITY,
      );
    }
    // Both processes did work, and no message was answered twice or dropped.
    expect(platforms.every((platform) => platform.replies.length > 0)).toBe(true);
    const { store } = apps[0]?.butler ?? {};
    const conversation = await store?.conversations.find(encodeConversationKey(shared));
    const window = (await store?.conversations.window(conversation?.id ?? '')) ?? [];
    const userTexts = window.filter((message) => message.role === 'user').map((message) => message.content);
    expect(userTexts.sort()).toEqual(texts.sort());
    expect(window.filter((message) => message.role === 'assistant')).toHaveLength(sharedReplies.length);
  });
});
