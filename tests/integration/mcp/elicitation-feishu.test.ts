import { describe, expect, it } from 'vitest';
import type { Json } from '../../helpers/fake-feishu-api.js';
import { cardClick, questionCardIn } from '../../helpers/feishu-input-forms.js';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import { useShopServer } from '../../helpers/shop-server.js';
import {
  aliceOpenId,
  bobOpenId,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from '../feishu/feishu-butler.js';

/**
 * A 2026-07-28 MCP server's question on Feishu, through the real Lark SDK path against the fake Open API: a card
 * with a form container; its requester submits it (another person's click is refused), values that do not fit
 * get a toast naming each field, and the call is made again with the answer.
 */

const shop = useShopServer(start2026HttpServer);
const suite = useFeishuButler({ config: shop.config });

/** Alice asks Butler to ship a mug; the server asks where. Returns the question card. */
async function askToShip() {
  suite.model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, text: '@_user_1 ship a mug' }));
  await suite.app.settle();
  const question = questionCardIn(repliesTo(suite.fake, messageId));
  if (!question) throw new Error('no question card was sent');
  return question;
}

const click = (options: { operator: string; value: unknown; messageId: string; formValue?: Json }) =>
  cardClick(suite.url, options);

describe('a server’s question on Feishu', () => {
  it('is a form card; only the requester submits it, every field checked; the call goes on with it', async () => {
    const { cardMessageId, card, callbackOf, fields, nameOf } = await askToShip();
    expect(JSON.stringify(card)).toContain('Where should the mug go?');
    expect(fields.map((field) => field.tag).sort()).toEqual(['checker', 'input', 'input', 'select_static']);
    const submit = callbackOf('Submit');

    const stranger = await click({
      operator: bobOpenId,
      value: submit,
      messageId: cardMessageId,
      formValue: {},
    });
    expect(stranger.body).toMatchObject({ toast: { content: expect.stringContaining('Only') } });

    const [address, copies] = [nameOf('Address'), nameOf('Copies')];

    const wrong = await click({
      operator: aliceOpenId,
      value: submit,
      messageId: cardMessageId,
      formValue: { [address]: 'x' },
    });
    expect(wrong.body).toMatchObject({ toast: { type: 'error' } });
    expect(JSON.stringify(wrong.body)).toContain('Address: Enter at least 3 characters.');
    expect(JSON.stringify(wrong.body)).toContain('Speed: Required.');
    const callsBefore = shop.server.calls.length;

    suite.model.enqueue({ text: 'Your mug ships express.' });
    const formValue = {
      [address]: '1 Main St',
      [nameOf('Speed')]: 'express',
      [copies]: '2',
      [nameOf('Gift wrap')]: true,
    };
    const sent = await click({ operator: aliceOpenId, value: submit, messageId: cardMessageId, formValue });
    expect(sent.body).toMatchObject({ toast: { type: 'success' }, card: { type: 'raw' } });
    await suite.app.settle();
    expect(shop.server.calls.slice(callsBefore)).toEqual([
      expect.objectContaining({
        requestState: 'ship:mug',
        inputResponses: {
          shipping: {
            action: 'accept',
            content: { address: '1 Main St', speed: 'express', copies: 2, gift: true },
          },
        },
      }),
    ]);
    const again = await click({
      operator: aliceOpenId,
      value: callbackOf('Decline'),
      messageId: cardMessageId,
    });
    expect(again.body).toMatchObject({ toast: { content: expect.stringContaining('closed') } });
    expect(shop.server.calls.length).toBe(callsBefore + 1);
  });

  it('goes on with cancel when the requester cancels', async () => {
    const { cardMessageId, callbackOf } = await askToShip();
    suite.model.enqueue({ text: 'Cancelled.' });
    const cancelled = await click({
      operator: aliceOpenId,
      value: callbackOf('Cancel'),
      messageId: cardMessageId,
    });
    expect(cancelled.body).toMatchObject({ toast: { type: 'success' } });
    await suite.app.settle();
    expect(shop.server.calls.at(-1)).toMatchObject({ inputResponses: { shipping: { action: 'cancel' } } });
  });
});
