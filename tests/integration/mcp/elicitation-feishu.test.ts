import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import {
  aliceOpenId,
  bobOpenId,
  cardActionEvent,
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

let shop: Awaited<ReturnType<typeof start2026HttpServer>>;
beforeAll(async () => {
  shop = await start2026HttpServer();
});
afterAll(async () => {
  await shop.close();
});

const suite = useFeishuButler({
  config: {
    get mcpServers() {
      return [{ name: 'shop', url: shop.url, tools: { risk: { ship: 'low' } } }];
    },
  },
});

type Json = Record<string, unknown>;

function* components(node: unknown): Generator<Json> {
  if (Array.isArray(node)) for (const item of node) yield* components(item);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Json;
    if (typeof record.tag === 'string') yield record;
    for (const value of Object.values(record)) yield* components(value);
  }
}

/** Alice asks Butler to ship a mug; the server asks where. Returns the question card and its message id. */
async function askToShip() {
  suite.model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, text: '@_user_1 ship a mug' }));
  await suite.app.settle();
  const question = repliesTo(suite.fake, messageId).find((message) =>
    JSON.stringify(message.content).includes('"tag":"form"'),
  );
  if (!question) throw new Error('no question card was sent');
  const card = question.content as Json;
  const buttons = [...components(card)].filter((component) => component.tag === 'button');
  const callbackOf = (text: string) =>
    (buttons.find((button) => (button.text as Json).content === text)?.behaviors as Json[] | undefined)?.find(
      (behavior) => behavior.type === 'callback',
    )?.value;
  const all = [...components(card)];
  const fields = all.filter(
    (component) =>
      typeof component.name === 'string' && component.tag !== 'form' && component.tag !== 'button',
  );
  /** A field's name by its label: the markdown line before it, or a checkbox's own text. */
  const nameOf = (label: string) => {
    const index = all.findIndex(
      (component) =>
        (component.tag === 'markdown' && String(component.content).startsWith(`**${label}**`)) ||
        (component.tag === 'checker' && (component.text as Json).content === label),
    );
    return String(all.slice(index).find((component) => fields.includes(component))?.name);
  };
  return { cardMessageId: question.messageId, card, callbackOf, fields, nameOf };
}

const click = (options: { operator: string; value: unknown; messageId: string; formValue?: Json }) =>
  postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({
      operatorOpenId: options.operator,
      value: options.value,
      messageId: options.messageId,
      chatId: 'oc_group_chat',
      ...(options.formValue ? { formValue: options.formValue } : {}),
    }),
  );

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
    const callsBefore = shop.calls.length;

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
    expect(shop.calls.slice(callsBefore)).toEqual([
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
    expect(shop.calls.length).toBe(callsBefore + 1);
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
    expect(shop.calls.at(-1)).toMatchObject({ inputResponses: { shipping: { action: 'cancel' } } });
  });
});
