import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { latch } from '../../helpers/wait-for.js';

let model: FakeModelServer;
let app: TestButler;
let platform: RecordingAdapter;

beforeAll(async () => {
  model = await startFakeModelServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', BUTLER_API_TOKEN: 'sk-test' },
    config: {
      systemPrompt: 'You help the platform team of Example Corp.',
      rateLimit: { messagesPerMinute: 3 },
    },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});
afterEach(() => model.reset());

const conversationOf = (message: ReturnType<typeof inboundMessage>) => encodeConversationKey(message.address);

describe(`turns on ${databaseKind}`, () => {
  it('answers a message with a streamed reply and keeps the exchange', async () => {
    model.enqueue({ text: 'Hello Ana, how can I help?' });
    const message = inboundMessage({ text: 'hi butler' });
    expect(await app.butler.service.accept(message)).toMatchObject({ status: 'accepted' });
    await app.settle();

    const reply = platform.replies.at(-1);
    expect(reply?.finalText).toBe('Hello Ana, how can I help?');
    expect(reply?.deltas.join('')).toBe('Hello Ana, how can I help?');
    expect(reply?.target.replyTo).toBe(message.messageId);

    const sent = model.requests[0];
    const system = String(sent?.messages[0]?.content);
    expect(system).toContain('You are Butler');
    expect(system).toContain('Example Corp');
    expect(system).toContain(new Date().toISOString().slice(0, 10));
    expect(sent?.messages.at(-1)).toMatchObject({ role: 'user', content: 'hi butler' });
    expect(sent?.body.stream).toBe(true);

    const conversation = await app.butler.store.conversations.find(conversationOf(message));
    const window = await app.butler.store.conversations.window(conversation?.id ?? '');
    expect(window.map((entry) => [entry.role, entry.content])).toEqual([
      ['user', 'hi butler'],
      ['assistant', 'Hello Ana, how can I help?'],
    ]);
    expect(conversation?.inflight).toBeNull();
  });

  it('answers a redelivered message once', async () => {
    model.setFallback({ text: 'once' });
    const message = inboundMessage({ text: 'are you there?' });
    const results = await Promise.all([1, 2, 3].map(() => app.butler.service.accept({ ...message })));
    expect(results.map((result) => result.status).sort()).toEqual(['accepted', 'duplicate', 'duplicate']);
    await app.settle();
    expect(model.requests).toHaveLength(1);
    expect(platform.replies.filter((reply) => reply.target.replyTo === message.messageId)).toHaveLength(1);
  });

  it('folds messages that arrive while a turn runs into the next turn', async () => {
    const address = { platform: 'console' as const, workspace: 'local', channel: 'team', thread: 'busy' };
    const user = { id: 'bo', name: 'Bo' };
    // The first answer waits until both later messages are stored, however long storing them takes.
    const firstAnswer = latch();
    model.enqueue(
      async () => {
        await firstAnswer.opened;
        return { text: 'first answer', chunks: ['first ', 'answer'] };
      },
      { text: 'second answer' },
    );
    await app.butler.service.accept(inboundMessage({ text: 'one', address, user, isDirect: false }));
    await model.waitForRequests(1);
    await app.butler.service.accept(inboundMessage({ text: 'two', address, user, isDirect: false }));
    await app.butler.service.accept(inboundMessage({ text: 'three', address, user, isDirect: false }));
    firstAnswer.open();
    await app.settle();

    expect(model.requests).toHaveLength(2);
    const second = model.requests[1]?.messages ?? [];
    expect(second.slice(-2)).toEqual([
      { role: 'user', content: 'Bo: two' },
      { role: 'user', content: 'Bo: three' },
    ]);
    expect(second).toContainEqual({ role: 'assistant', content: 'first answer' });
  });

  it('answers politely instead of with the model beyond the per-user rate limit', async () => {
    model.setFallback({ text: 'answer' });
    const address = { platform: 'console' as const, workspace: 'local', channel: 'general', thread: 'flood' };
    const user = { id: 'flooder', name: 'Flo' };
    for (let index = 0; index < 5; index++) {
      await app.butler.service.accept(inboundMessage({ text: `message ${index}`, address, user }));
    }
    await app.settle();
    const asked = new Set(
      model.requests.flatMap((request) =>
        request.messages.filter((message) => message.role === 'user').map((message) => message.content),
      ),
    );
    expect([...asked].sort()).toEqual(['message 0', 'message 1', 'message 2']);
    const notices = platform.notices.filter((notice) => notice.target.address.thread === 'flood');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toContain('3 a minute');
  });
});

describe(`access allowlists on ${databaseKind}`, () => {
  it('drops messages from outside the allowlists without storing them', async () => {
    const guarded = await startTestButler({
      env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
      config: { access: { console: { workspaces: ['local'], channels: ['ops'], users: ['ana', 'bo'] } } },
      adapters: [new RecordingAdapter()],
    });
    try {
      const inChannel = { platform: 'console' as const, workspace: 'local', channel: 'ops', thread: 'x' };
      const accept = (overrides: Parameters<typeof inboundMessage>[0]) =>
        guarded.butler.service.accept(inboundMessage(overrides));
      expect(await accept({ text: 'hi', address: inChannel, isDirect: false })).toMatchObject({
        status: 'accepted',
      });
      expect(
        await accept({ text: 'hi', address: inChannel, isDirect: false, user: { id: 'mallory' } }),
      ).toEqual({
        status: 'ignored',
        reason: 'not_allowed',
      });
      expect(
        await accept({ text: 'hi', address: { ...inChannel, channel: 'random' }, isDirect: false }),
      ).toMatchObject({
        status: 'ignored',
      });
      expect(
        await accept({ text: 'hi', address: { ...inChannel, workspace: 'other' }, isDirect: false }),
      ).toMatchObject({
        status: 'ignored',
      });
      // The channel list governs channels; an allowed user's direct messages still get through.
      expect(
        await accept({ text: 'hi', address: { ...inChannel, channel: 'D-ana' }, isDirect: true }),
      ).toMatchObject({
        status: 'accepted',
      });
    } finally {
      await guarded.close();
    }
  });
});
