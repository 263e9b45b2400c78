import { describe, expect, it } from 'vitest';
import { toCardMarkdown } from '../../../src/adapters/feishu/markdown.js';
import { lastUserContent, storedEvents } from '../../helpers/platform-butler.js';
import {
  bobOpenId,
  challengePayload,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

const suite = useFeishuButler();

describe('Feishu conversations through the running Butler', () => {
  it('answers the URL verification challenge', async () => {
    expect(await postToButler(suite.url, challengePayload('c-live'), { unsigned: true })).toEqual({
      status: 200,
      body: { challenge: 'c-live' },
    });
  });

  it('answers a group mention with a streaming card replying to the message', async () => {
    suite.model.enqueue({
      text: 'The **payments** service is healthy.',
      chunks: ['The **pay', 'ments** service ', 'is healthy.'],
      chunkDelayMs: 120,
    });
    const messageId = uniqueId('om_');
    const answer = await postToButler(
      suite.url,
      messageEvent({ messageId, text: '@_user_1 how is payments?' }),
    );
    expect(answer.status).toBe(200);
    await suite.app.settle();

    expect(lastUserContent(suite.model, 0)).toContain('how is payments?');
    expect(lastUserContent(suite.model, 0)).not.toContain('@_user_1');
    const [reply, ...more] = repliesTo(suite.fake, messageId);
    expect(more).toEqual([]);
    expect(reply?.replyInThread).toBe(false);
    expect(reply?.content).toMatchObject({ type: 'card' });
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe(
      toCardMarkdown('The **payments** service is healthy.'),
    );
    const updates = suite.fake.callsTo('PUT', /\/elements\/reply\/content$/);
    expect(updates.length).toBeGreaterThan(0);
    const cardId = (reply?.content.data as { card_id: string } | undefined)?.card_id ?? '';
    expect(suite.fake.cards.get(cardId)?.streaming).toBe(false);
  });

  it('ignores group messages that do not mention the bot, including mentions of someone else', async () => {
    const before = await storedEvents(suite.app);
    await postToButler(suite.url, messageEvent({ text: 'anyone for lunch?', mentions: [] }));
    await postToButler(
      suite.url,
      messageEvent({
        text: '@_user_1 can you check?',
        mentions: [{ key: '@_user_1', openId: bobOpenId, name: 'Bob' }],
      }),
    );
    await suite.app.settle();
    expect(await storedEvents(suite.app)).toBe(before);
    expect(suite.model.requests).toHaveLength(0);
  });

  it('replies inside the thread the message was written in', async () => {
    const messageId = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({
        messageId,
        threadId: 'omt_incident42',
        rootId: 'om_incident_root',
        text: '@_user_1 summarise',
      }),
    );
    await suite.app.settle();
    const [reply] = repliesTo(suite.fake, messageId);
    expect(reply?.replyInThread).toBe(true);
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe('ok');
  });

  it('answers every direct message straight into the chat, and stickers politely', async () => {
    const chatId = uniqueId('oc_dm_');
    suite.model.enqueue({ text: 'Hello!' }, { text: 'I cannot see stickers, sorry.' });
    await postToButler(suite.url, messageEvent({ chatType: 'p2p', chatId, text: 'hello there' }));
    await suite.app.settle();
    await postToButler(
      suite.url,
      messageEvent({ chatType: 'p2p', chatId, messageType: 'sticker', content: { file_key: 'v3_sticker' } }),
    );
    await suite.app.settle();
    const inChat = suite.fake.sentMessages().filter((message) => message.chatId === chatId);
    expect(inChat.map((message) => suite.fake.visibleText(message.messageId))).toEqual([
      'Hello!',
      'I cannot see stickers, sorry.',
    ]);
    expect(inChat.every((message) => message.replyTo === undefined)).toBe(true);
    expect(lastUserContent(suite.model, 1)).toBe('[sent a sticker]');
  });

  it('answers a redelivered message once, whether the event id is new or the same', async () => {
    const messageId = uniqueId('om_');
    const event = messageEvent({ messageId, eventId: 'ev_first' });
    const statuses = [];
    statuses.push((await postToButler(suite.url, event)).status);
    statuses.push((await postToButler(suite.url, event)).status);
    statuses.push((await postToButler(suite.url, messageEvent({ messageId, eventId: 'ev_retry' }))).status);
    await suite.app.settle();
    expect(statuses).toEqual([200, 200, 200]);
    expect(suite.model.requests).toHaveLength(1);
    expect(repliesTo(suite.fake, messageId)).toHaveLength(1);
  });

  it('rejects bad signatures, stale timestamps and wrong tokens with 401 and stores nothing', async () => {
    const before = await storedEvents(suite.app);
    const now = Math.floor(Date.now() / 1000);
    const responses = await Promise.all([
      postToButler(suite.url, messageEvent(), { signingKey: 'forged' }),
      postToButler(suite.url, messageEvent(), { timestamp: now - 600 }),
      postToButler(suite.url, messageEvent({ token: 'stolen-token' })),
      postToButler(suite.url, messageEvent(), { unsigned: true }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 401]);
    await suite.app.settle();
    expect(await storedEvents(suite.app)).toBe(before);
    expect(suite.model.requests).toHaveLength(0);
  });

  it('skips messages that arrive long after they were sent', async () => {
    const before = await storedEvents(suite.app);
    await postToButler(suite.url, messageEvent({ createTime: Date.now() - 2 * 60 * 60_000 }));
    await suite.app.settle();
    expect(await storedEvents(suite.app)).toBe(before);
  });

  it('falls back to patching a card when CardKit is unavailable, and the full text arrives', async () => {
    suite.fake.cardkitUnavailable();
    const text = 'Fallback answer that arrives in several pieces.';
    suite.model.enqueue({
      text,
      chunks: ['Fallback answer ', 'that arrives ', 'in several pieces.'],
      chunkDelayMs: 100,
    });
    const messageId = uniqueId('om_');
    await postToButler(suite.url, messageEvent({ messageId }));
    await suite.app.settle();
    const [reply] = repliesTo(suite.fake, messageId);
    expect(reply?.content).toMatchObject({ schema: '2.0' });
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe(text);
  });

  it('shows a typing reaction on the message while working and removes it after', async () => {
    // Slower to start than the working indicator's delay (500 ms); a quicker reply shows none.
    suite.model.enqueue(async () => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      return { text: 'Done.' };
    });
    const messageId = uniqueId('om_');
    await postToButler(suite.url, messageEvent({ messageId }));
    await suite.app.settle();
    const reactions = [...suite.fake.reactions.values()].filter(
      (reaction) => reaction.messageId === messageId,
    );
    expect(reactions).toEqual([{ messageId, emojiType: 'Typing', deleted: true }]);
  });
});
