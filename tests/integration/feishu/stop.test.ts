import { describe, expect, it } from 'vitest';
import type { FakeMessage, Json } from '../../helpers/fake-feishu-api.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  aliceOpenId,
  bobOpenId,
  cardActionEvent,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

const suite = useFeishuButler();
/** Where `messageEvent` says group messages are written. */
const groupChat = 'oc_group_chat';

const longAnswer = () => ({
  text: 'x',
  chunks: Array.from({ length: 200 }, (_, index) => `word${index} `),
  chunkDelayMs: 50,
});

/**
 * A click on what the message shows as its Stop button, the way Feishu calls back from the chat it is in (the
 * fake does not know the chat of a reply to a message it never saw).
 */
function clickStop(message: FakeMessage, operatorOpenId: string, chatId = groupChat, value?: Json) {
  const shown = value ?? suite.fake.buttonValue(message.messageId, 'stop');
  if (!shown) throw new Error(`message ${message.messageId} shows no Stop button`);
  return postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({ operatorOpenId, messageId: message.messageId, chatId, value: shown }),
  );
}

/** The reply to `messageId` once it shows `words` words and its Stop button. */
function writingReply(messageId: string, words = 3): Promise<FakeMessage> {
  return waitFor(() => {
    const reply = repliesTo(suite.fake, messageId)[0];
    if (!reply || !suite.fake.buttonValue(reply.messageId, 'stop')) return undefined;
    return suite.fake.visibleText(reply.messageId).includes(`word${words - 1} `) && reply;
  }, 10_000);
}

describe('Feishu Stop button through the running Butler', () => {
  it('stops a streaming CardKit reply in a thread at once; the card keeps what was written, marked, without the button', async () => {
    suite.fake.contactUsers.set(bobOpenId, { name: 'Bob' });
    suite.model.enqueue(longAnswer());
    const threadId = uniqueId('omt_');
    const messageId = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({ messageId, threadId, text: '@_user_1 write me a long answer' }),
    );
    const reply = await writingReply(messageId);
    expect(reply.content).toMatchObject({ type: 'card' });
    expect(suite.fake.buttonValue(reply.messageId, 'stop')).toEqual({ butler: 'stop', thread: threadId });

    // A replayed click (older than Feishu's callbacks can be) stops nothing.
    const replayed = await postToButler(
      suite.url.replace('/events', '/card'),
      cardActionEvent({
        operatorOpenId: aliceOpenId,
        messageId: reply.messageId,
        chatId: groupChat,
        value: { butler: 'stop', thread: threadId },
        createTime: Date.now() - 10 * 60_000,
      }),
      { timestamp: Math.floor(Date.now() / 1000) },
    );
    expect(replayed.body).toMatchObject({ toast: { type: 'error' } });

    const clicked = Date.now();
    const answer = await clickStop(reply, bobOpenId);
    expect(answer).toEqual({ status: 200, body: { toast: { type: 'info', content: 'Stopping…' } } });
    await waitFor(() => suite.fake.visibleText(reply.messageId).endsWith('_Stopped by Bob._'), 5_000);
    // Long before the stream's own end, with room for a loaded machine.
    expect(Date.now() - clicked).toBeLessThan(3_000);
    await suite.app.settle();

    const shown = suite.fake.visibleText(reply.messageId);
    expect(shown).toMatch(/^word0 word1 word2 [\s\S]*\n\n_Stopped by Bob\._$/);
    expect(shown).not.toContain('word199');
    expect(suite.fake.buttonValue(reply.messageId, 'stop')).toBeUndefined();
    const cardId = String((reply.content.data as Json).card_id);
    expect(suite.fake.cards.get(cardId)?.streaming).toBe(false);
    expect(suite.fake.callsTo('DELETE', `/open-apis/cardkit/v1/cards/${cardId}/elements/stop`)).toHaveLength(
      1,
    );

    // The button's value still reaches Butler from a stale client: nothing runs there any more.
    const late = await clickStop(reply, bobOpenId, groupChat, { butler: 'stop', thread: threadId });
    expect(late.body).toEqual({ toast: { type: 'info', content: 'Nothing is running.' } });

    suite.model.enqueue({ text: 'Short answer this time.' });
    const next = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({ messageId: next, threadId, text: '@_user_1 shorter please' }),
    );
    await suite.app.settle();
    const [nextReply] = repliesTo(suite.fake, next);
    expect(suite.fake.visibleText(nextReply?.messageId as string)).toBe('Short answer this time.');
    expect(suite.fake.buttonValue(nextReply?.messageId as string, 'stop')).toBeUndefined();
  });

  it('offers Stop on a patched card in a direct chat when CardKit is unavailable, and stops that reply too', async () => {
    suite.fake.cardkitUnavailable();
    suite.model.enqueue(longAnswer());
    const chatId = uniqueId('oc_');
    await postToButler(suite.url, messageEvent({ chatType: 'p2p', chatId, text: 'write me a long answer' }));
    const reply = await waitFor(() => {
      const card = suite.fake.sentMessages().find((message) => message.chatId === chatId);
      return card && suite.fake.buttonValue(card.messageId, 'stop') && card;
    }, 10_000);
    expect(reply.content).toMatchObject({ schema: '2.0', config: { update_multi: true } });
    expect(suite.fake.buttonValue(reply.messageId, 'stop')).toEqual({
      butler: 'stop',
      thread: 'main',
      direct: true,
    });

    const answer = await clickStop(reply, aliceOpenId, chatId);
    expect(answer.body).toEqual({ toast: { type: 'info', content: 'Stopping…' } });
    await suite.app.settle();
    // Alice's name is not in the contact API: the mark names her open_id.
    expect(suite.fake.visibleText(reply.messageId)).toMatch(
      new RegExp(`^word0 [\\s\\S]*\\n\\n_Stopped by ${aliceOpenId}\\._$`),
    );
    expect(suite.fake.buttonValue(reply.messageId, 'stop')).toBeUndefined();
    expect(suite.fake.sentMessages().filter((message) => message.chatId === chatId)).toHaveLength(1);
  });

  it('answers a click in a conversation where nothing runs, without stopping the next turn', async () => {
    const threadId = uniqueId('omt_');
    const idle = await postToButler(
      suite.url.replace('/events', '/card'),
      cardActionEvent({ operatorOpenId: bobOpenId, value: { butler: 'stop', thread: threadId } }),
    );
    expect(idle.body).toEqual({ toast: { type: 'info', content: 'Nothing is running.' } });

    suite.model.enqueue({ text: 'All good.' });
    const messageId = uniqueId('om_');
    await postToButler(suite.url, messageEvent({ messageId, threadId, text: '@_user_1 status?' }));
    await suite.app.settle();
    const [reply] = repliesTo(suite.fake, messageId);
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe('All good.');
  });
});
