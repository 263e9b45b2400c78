import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { lastUserContent, storedEvents } from '../../helpers/platform-butler.js';
import {
  appMention,
  asJson,
  directMessage,
  envelope,
  ownMessage,
  postToSlack,
  team,
  userMessage,
} from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model);
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const send = (event: Record<string, unknown>, options?: Parameters<typeof postToSlack>[2]) =>
  postToSlack(slackUrl, asJson(envelope(event)), options);

/** A thread Bob and Alice (names known) wrote in #general before anyone mentioned Butler; its root ts. */
function seedThread(...messages: Array<Omit<Parameters<FakeSlackApi['seedMessage']>[0], 'channel' | 'ts'>>) {
  fake.users.set('U0BOB', { name: 'bob', displayName: 'Bob' });
  fake.users.set('U0ALICE', { name: 'alice', displayName: 'Alice' });
  const root = freshTs();
  for (const [index, message] of messages.entries()) {
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: index === 0 ? root : freshTs(),
      ...(index === 0 ? {} : { threadTs: root }),
      ...message,
    });
  }
  return root;
}

function replyIn(channel: string, threadTs: string | undefined) {
  return fake.threadMessages(channel, threadTs).filter((message) => message.user === botUserId);
}

describe('Slack conversations through the running Butler', () => {
  it('answers a channel mention with a streamed reply in its thread', async () => {
    // The model takes longer to start than the working indicator's delay (500 ms): the reaction shows.
    model.enqueue(async () => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      return {
        text: 'All 3 services are **healthy**.',
        chunks: ['All 3 services ', 'are **healthy**.'],
        chunkDelayMs: 20,
      };
    });
    const ts = freshTs();
    fake.seedMessage({ channel: 'C0GENERAL', ts, user: 'U0ALICE', text: `<@${botUserId}> status?` });
    const response = await send(
      appMention({ ts, text: `<@${botUserId}> what is the status of <@U0BOB>'s deploy?` }),
    );
    expect(response.status).toBe(200);
    await app.settle();

    expect(lastUserContent(model, 0)).toContain("what is the status of <@U0BOB>'s deploy?");
    const start = fake.callsTo('chat.startStream')[0];
    expect(start?.args).toMatchObject({
      channel: 'C0GENERAL',
      thread_ts: ts,
      recipient_user_id: 'U0ALICE',
      recipient_team_id: team,
    });
    const [reply] = replyIn('C0GENERAL', ts).filter((message) => message.ts !== ts);
    expect(reply && shownText(reply)).toBe('All 3 services are **healthy**.');
    expect(reply?.streaming).toBe(false);
    // The working reaction came and went.
    expect(fake.callsTo('reactions.add')[0]?.args).toMatchObject({
      channel: 'C0GENERAL',
      timestamp: ts,
      name: 'eyes',
    });
    expect(fake.callsTo('reactions.remove')).toHaveLength(1);
  });

  it('shows no working reaction when the reply starts before the indicator is due', async () => {
    // Due only after a minute: however slow the machine, this reply starts first (with the default 500 ms, a
    // loaded CI machine once took longer than that to start it).
    const patient = await startSlackButler(fake, model, undefined, {
      config: { worker: { workingIndicatorMilliseconds: 60_000 } },
    });
    try {
      model.enqueue({ text: 'Quick one.' });
      const ts = freshTs();
      fake.seedMessage({ channel: 'C0GENERAL', ts, user: 'U0ALICE', text: `<@${botUserId}> ping` });
      await postToSlack(
        `${patient.url}/slack/events`,
        asJson(envelope(appMention({ ts, text: `<@${botUserId}> ping` }))),
      );
      await patient.settle();
      const [reply] = replyIn('C0GENERAL', ts).filter((message) => message.ts !== ts);
      expect(reply && shownText(reply)).toBe('Quick one.');
      expect(fake.callsTo('reactions.add')).toHaveLength(0);
      expect(fake.callsTo('reactions.remove')).toHaveLength(0);
    } finally {
      await patient.close();
    }
  });

  it('reads the thread when mentioned inside one it was not part of, and resolves names', async () => {
    model.enqueue({ text: 'Looks like the migration timed out.' });
    const root = seedThread(
      { user: 'U0BOB', text: 'deploy 42 failed at the migration step' },
      { user: 'U0ALICE', text: '<@U0BOB> which table?' },
    );
    const ts = freshTs();
    await send(appMention({ ts, threadTs: root, text: `<@${botUserId}> any idea what happened?` }));
    await app.settle();
    const contents = (model.requests[0]?.messages ?? []).map((message) => String(message.content));
    const context = contents.find((content) => content.startsWith('(Earlier messages in this thread'));
    expect(context).toContain('Bob: deploy 42 failed at the migration step');
    expect(context).toContain('Alice: @Bob which table?');
    expect(lastUserContent(model, 0)).toMatch(/Alice.*any idea what happened\?/);
    expect(fake.callsTo('chat.startStream')[0]?.args.thread_ts).toBe(root);
  });

  it('gives the thread context the files, forwards and blocks-only messages of the thread too', async () => {
    model.enqueue({ text: 'The log says the lock timed out.' });
    const root = seedThread(
      {
        user: 'U0BOB',
        text: 'migration log attached',
        files: [{ id: 'F1', name: 'migrate.log', mimetype: 'text/plain' }],
      },
      {
        user: 'U0ALICE',
        text: '',
        attachments: [
          {
            is_share: true,
            author_name: 'Carol',
            channel_name: 'ops',
            text: 'the lock on accounts was held for 10 minutes',
            fallback: 'the lock on accounts was held for 10 minutes',
          },
        ],
      },
      {
        user: 'U0BOB',
        text: '',
        blocks: [
          {
            type: 'rich_text',
            elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'retrying at noon' }] }],
          },
        ],
      },
    );
    await send(appMention({ ts: freshTs(), threadTs: root, text: `<@${botUserId}> why did it fail?` }));
    await app.settle();
    const contents = (model.requests[0]?.messages ?? []).map((message) => String(message.content));
    const context = contents.find((content) => content.startsWith('(Earlier messages in this thread')) ?? '';
    expect(context).toContain('Bob: migration log attached');
    expect(context).toContain('[attached file: migrate.log (text/plain); Butler cannot open attachments]');
    expect(context).toContain('the lock on accounts was held for 10 minutes');
    expect(context).toContain('Carol');
    expect(context).toContain('Bob: retrying at noon');
  });

  it('answers Slack retries and message + app_mention double delivery once', async () => {
    model.setFallback({ text: 'answer' });
    const root = freshTs();
    await send(appMention({ ts: root }));
    await send(appMention({ ts: root }), {
      headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
    });
    await app.settle();
    expect(model.requests).toHaveLength(1);

    const followUp = freshTs();
    const text = `<@${botUserId}> and the database?`;
    const [first, second] = await Promise.all([
      send(userMessage({ ts: followUp, threadTs: root, text })),
      send(appMention({ ts: followUp, threadTs: root, text })),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    await send(appMention({ ts: followUp, threadTs: root, text }), { headers: { 'x-slack-retry-num': '2' } });
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(fake.callsTo('chat.startStream')).toHaveLength(2);
  });

  it("answers follow-ups without a mention in Butler's threads only, storing nothing for others", async () => {
    model.setFallback({ text: 'sure' });
    const root = freshTs();
    await send(appMention({ ts: root }));
    await app.settle();
    const before = await storedEvents(app);

    await send(userMessage({ ts: freshTs(), threadTs: freshTs(), text: 'unrelated thread chatter' }));
    await send(userMessage({ ts: freshTs(), text: 'top-level chatter' }));
    await send(ownMessage({ ts: freshTs(), threadTs: root }));
    await app.settle();
    expect(await storedEvents(app)).toBe(before);
    expect(model.requests).toHaveLength(1);

    await send(userMessage({ ts: freshTs(), threadTs: root, text: 'how long will it take?' }));
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(lastUserContent(model, 1)).toContain('how long will it take?');
    expect(fake.callsTo('chat.startStream').every((call) => call.args.thread_ts === root)).toBe(true);
  });

  it("streams the answer to a top-level DM in the message's thread, with an assistant status", async () => {
    // Slower to start than the working indicator's delay: the status shows.
    model.enqueue(async () => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      return { text: 'Hi! How can I help?', chunks: ['Hi! ', 'How can I help?'], chunkDelayMs: 20 };
    });
    const ts = freshTs();
    fake.seedMessage({ channel: 'D0ALICE', ts, user: 'U0ALICE', text: 'hello' });
    await send(directMessage({ ts }));
    await app.settle();
    // The fake refuses a stream without thread_ts (invalid_arguments), as Slack does: it streamed, no fallback.
    const start = fake.callsTo('chat.startStream')[0];
    expect(start?.args).toMatchObject({ channel: 'D0ALICE', thread_ts: ts });
    expect(fake.callsTo('chat.postMessage')).toHaveLength(0);
    expect(fake.callsTo('assistant.threads.setStatus')[0]?.args).toMatchObject({
      channel_id: 'D0ALICE',
      thread_ts: ts,
    });
    expect(replyIn('D0ALICE', ts).map(shownText)).toEqual(['Hi! How can I help?']);
    expect(replyIn('D0ALICE', undefined)).toEqual([]);

    // The next top-level message continues the same conversation, answered in its own thread.
    model.enqueue({ text: 'Still here.' });
    const next = freshTs();
    await send(directMessage({ ts: next, text: 'are you there?' }));
    await app.settle();
    expect(model.requests[1]?.messages.map((message) => message.content)).toContain('Hi! How can I help?');
    expect(fake.callsTo('chat.startStream')[1]?.args.thread_ts).toBe(next);
  });

  it.each([
    ['a bad signature', () => ({ signature: 'v0=0000' })],
    ['a stale timestamp', () => ({ timestamp: Math.floor(Date.now() / 1000) - 600 })],
    ['a future timestamp', () => ({ timestamp: Math.floor(Date.now() / 1000) + 600 })],
  ])('refuses %s with 401 and stores nothing', async (_label, options) => {
    const before = await storedEvents(app);
    const response = await send(appMention({ ts: freshTs() }), options());
    expect(response.status).toBe(401);
    await app.settle();
    expect(await storedEvents(app)).toBe(before);
    expect(model.requests).toHaveLength(0);
  });

  it('falls back to post and update when streaming is unavailable', async () => {
    fake.streaming = false;
    model.enqueue({
      text: 'Fallback reply, in full.',
      chunks: ['Fallback ', 'reply, ', 'in full.'],
      chunkDelayMs: 30,
    });
    const ts = freshTs();
    await send(appMention({ ts }));
    await app.settle();
    expect(fake.callsTo('chat.postMessage')).toHaveLength(1);
    const reply = replyIn('C0GENERAL', ts)[0];
    expect(reply && shownText(reply)).toBe('Fallback reply, in full.');
  });

  it('retries a finished reply that Slack refused during an outage, and keeps it once', async () => {
    fake.streaming = false;
    fake.failNext('chat.postMessage', { error: 'internal_error' }, 3);
    model.enqueue({ text: 'Delivered after the outage.' });
    const ts = freshTs();
    await send(appMention({ ts }));
    await app.settle(15_000);
    // Three refusals, then the fourth post lands; nothing else was posted.
    expect(fake.callsTo('chat.postMessage')).toHaveLength(4);
    expect(replyIn('C0GENERAL', ts).map(shownText)).toEqual(['Delivered after the outage.']);
    const key = encodeConversationKey({
      platform: 'slack',
      workspace: team,
      channel: 'C0GENERAL',
      thread: ts,
    });
    const conversation = await app.butler.store.conversations.find(key);
    const stored = await app.butler.store.conversations.window(conversation?.id ?? '');
    expect(stored.map((message) => message.content)).toEqual([
      'what is the status of the deploy?',
      'Delivered after the outage.',
    ]);
  });

  it('tells the user in the thread when the model fails', async () => {
    model.enqueue(
      { status: 500, body: { error: { message: 'boom' } } },
      { status: 500 },
      { status: 500 },
      { status: 500 },
    );
    const ts = freshTs();
    await send(appMention({ ts }));
    await app.settle(20_000);
    const posted = fake.callsTo('chat.postMessage').map((call) => call.args);
    expect(
      posted.some((args) => args.thread_ts === ts && typeof args.text === 'string' && args.text.length > 0),
    ).toBe(true);
  });
});
