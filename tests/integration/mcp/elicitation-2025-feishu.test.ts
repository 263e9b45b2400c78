import { describe, expect, it } from 'vitest';
import { toolResultOf } from '../../helpers/api-questions.js';
import type { Json } from '../../helpers/fake-feishu-api.js';
import { cardClick, questionCardIn } from '../../helpers/feishu-input-forms.js';
import { start2025QuestionsHttpServer } from '../../helpers/mcp-2025-questions-server.js';
import { useShopServer } from '../../helpers/shop-server.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  aliceOpenId,
  bobOpenId,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from '../feishu/feishu-butler.js';

/**
 * A 2025-11-25 MCP server's question on Feishu, asked over its session while the call runs: the same card with a
 * form container, sent while the turn still runs; only the requester submits it, every field checked as for a
 * 2026 question; the answer goes back over the session and the same turn goes on (no second turn).
 */

const shop = useShopServer(start2025QuestionsHttpServer);
const suite = useFeishuButler({ config: shop.config });

/** Alice asks Butler to ship a mug; the server asks where, mid-call. Returns the card once it is sent. */
async function askToShip(then: string) {
  suite.model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  suite.model.enqueue({ text: then });
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, text: '@_user_1 ship a mug' }));
  const question = await waitFor(() => questionCardIn(repliesTo(suite.fake, messageId)), 20_000);
  return { ...question, messageId };
}

/** The turn's reply to `messageId` (the card it streams into): what it shows, and whether it still streams. */
function replyTo(messageId: string) {
  const reply = repliesTo(suite.fake, messageId).find((message) => message.content.type === 'card');
  if (!reply) return undefined;
  const card = suite.fake.cards.get(String((reply.content.data as Json).card_id));
  return {
    messageId: reply.messageId,
    text: suite.fake.visibleText(reply.messageId),
    streaming: card?.streaming,
  };
}

const click = (operator: string, value: unknown, messageId: string, formValue?: Json) =>
  cardClick(suite.url, { operator, value, messageId, ...(formValue ? { formValue } : {}) });

describe('a 2025 server’s question mid-call on Feishu', () => {
  it('is a form card only the requester submits, checked; the same turn goes on with the answer', async () => {
    const { messageId, cardMessageId, card, callbackOf, fieldOf, nameOf } =
      await askToShip('Your mug ships express.');
    expect(JSON.stringify(card)).toContain('Where should the mug go?');
    const actionOf = (text: string) => (callbackOf(text) as Json | undefined)?.input_action;
    expect(['Submit', 'Decline', 'Cancel'].map(actionOf)).toEqual(['submit', 'decline', 'cancel']);
    // The turn still runs, its call open: its reply streams what was asked, and the server has no answer yet.
    const streaming = await waitFor(() => replyTo(messageId)?.streaming && replyTo(messageId), 20_000);
    expect(streaming.text).toBe('shop asks the person who asked "Where should the mug go?".');
    expect(shop.server.calls).toEqual([]);
    const submit = callbackOf('Submit');

    const stranger = await click(bobOpenId, submit, cardMessageId, { [nameOf('Address')]: '9 Elsewhere' });
    expect(stranger.body).toMatchObject({ toast: { content: expect.stringContaining('Only') } });
    const wrong = await click(aliceOpenId, submit, cardMessageId, {
      [nameOf('Address')]: 'x',
      [nameOf('Copies')]: '0',
    });
    expect(wrong.body).toMatchObject({ toast: { type: 'error' } });
    for (const error of [
      'Address: Enter at least 3 characters.',
      'Speed: Required.',
      'Copies: Enter 1 or more.',
    ])
      expect(JSON.stringify(wrong.body)).toContain(error);
    expect(shop.server.calls).toEqual([]);

    // Alice types the address and picks express; the rest is sent as the card filled it in.
    expect(fieldOf('Copies')).toMatchObject({ tag: 'input', default_value: '1' });
    const formValue = {
      [nameOf('Address')]: '1 Main St',
      [nameOf('Speed')]: 'express',
      [nameOf('Copies')]: fieldOf('Copies')?.default_value,
      [nameOf('Gift wrap')]: fieldOf('Gift wrap')?.checked,
    };
    const sent = await click(aliceOpenId, submit, cardMessageId, formValue);
    expect(sent.body).toMatchObject({ toast: { type: 'success' }, card: { type: 'raw' } });
    await suite.app.settle(20_000);
    const content = { address: '1 Main St', speed: 'express', copies: 1, gift: false };
    expect(shop.server.calls).toEqual([
      { tool: 'ship', args: { item: 'mug' }, answer: { action: 'accept', content } },
    ]);
    // One turn: the model was asked twice (the call, then its result), and the same reply ends with its text.
    expect(suite.model.requests).toHaveLength(2);
    expect(toolResultOf(suite.model, 'call_ship')).toBe('Shipping the mug to 1 Main St (express, 1 copies).');
    const reply = replyTo(messageId);
    expect(reply).toMatchObject({ messageId: streaming.messageId, streaming: false });
    expect(reply?.text).toMatch(
      /^shop asks the person who asked "Where should the mug go\?"\.\n\nYour mug ships express\.$/,
    );
  }, 60_000);

  it('tells the server `cancel` when the requester cancels', async () => {
    const { messageId, cardMessageId, callbackOf } = await askToShip('Not shipped.');
    const cancelled = await click(aliceOpenId, callbackOf('Cancel'), cardMessageId);
    expect(cancelled.body).toMatchObject({ toast: { type: 'success' } });
    await suite.app.settle(20_000);
    expect(shop.server.calls).toEqual([
      expect.objectContaining({ tool: 'ship', answer: { action: 'cancel' } }),
    ]);
    expect(toolResultOf(suite.model, 'call_ship')).toBe('The person cancelled shipping the mug.');
    expect(replyTo(messageId)?.text).toMatch(
      /^shop asks the person who asked "Where should the mug go\?"\.\n\nNot shipped\.$/,
    );
  }, 60_000);
});
