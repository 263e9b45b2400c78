import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { inputWaits } from '../../../src/storage/schema.js';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import { useShopServer } from '../../helpers/shop-server.js';
import { modalSubmission, openedModal, questionClick, questionIn } from '../../helpers/slack-input-forms.js';
import { appMention, asForm, asJson, envelope, postToSlack } from '../../unit/slack/payloads.js';
import { freshTs, useSlackButler } from '../slack/slack-butler.js';

/**
 * A 2026-07-28 MCP server's question on Slack, through Bolt against the fake Web API: a message in the thread
 * with Fill in / Decline / Cancel, the modal Fill in opens, field errors on a wrong submission, and the call
 * made again with the requester's answer; anyone else is refused.
 */

const shop = useShopServer(start2026HttpServer, { approvalPolicy: { remindAfter: '1h' } });
const suite = useSlackButler({
  config: shop.config,
  prepare: (fake) => fake.users.set('U0ALICE', { name: 'alice' }),
});

const send = (payload: unknown) => postToSlack(suite.url, asForm(payload));

/** Alice asks Butler to ship a mug; the server asks where. Returns the question's message. */
async function askToShip() {
  suite.model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  const threadTs = freshTs();
  await postToSlack(suite.url, asJson(envelope(appMention({ ts: threadTs, text: 'ship a mug' }))));
  await suite.app.settle();
  const question = questionIn(suite.fake, threadTs);
  if (!question) throw new Error('no question was posted');
  return question;
}

describe('a server’s question on Slack', () => {
  it('is a message in the thread; only the requester fills in the modal; errors stay on the fields', async () => {
    const { fake, model, app } = suite;
    const question = await askToShip();
    expect(question.blocks).toContain('*shop* asks <@U0ALICE>: Where should the mug go?');
    expect(question.blocks).toContain('butler_input_decline');

    // Bob may not open it: he is told, and no modal opens.
    await send(questionClick('U0BOB', 'butler_input_fill', question));
    await expect.poll(() => fake.callsTo('chat.postEphemeral').length).toBe(1);
    expect(fake.callsTo('chat.postEphemeral')[0]?.args).toMatchObject({ user: 'U0BOB' });
    expect(String(fake.callsTo('chat.postEphemeral')[0]?.args.text)).toContain('Only');
    expect(fake.callsTo('views.open')).toHaveLength(0);

    await send(questionClick('U0ALICE', 'butler_input_fill', question));
    await expect.poll(() => fake.callsTo('views.open').length).toBe(1);
    // Fields are named by position in the modal: `block` finds each one's block.
    const { view, inputs, block } = openedModal(fake);
    const shape = (block: Record<string, unknown>) => [
      (block.label as { text: string }).text,
      (block.element as { type: string }).type,
      block.optional,
    ];
    expect(inputs.map(shape).sort()).toEqual([
      ['Address', 'plain_text_input', false],
      ['Copies', 'number_input', true],
      ['Gift wrap', 'checkboxes', true],
      ['Speed', 'static_select', false],
    ]);

    const wrong = await send(
      modalSubmission('U0ALICE', view, {
        [block('Address')]: { value: { type: 'plain_text_input', value: 'x' } },
      }),
    );
    expect(await wrong.json()).toEqual({
      response_action: 'errors',
      errors: { [block('Address')]: 'Enter at least 3 characters.', [block('Speed')]: 'Required.' },
    });
    const stranger = await send(
      modalSubmission('U0BOB', view, {
        field_0: { value: { type: 'plain_text_input', value: '9 Elsewhere' } },
      }),
    );
    expect(stranger.status).toBe(200);
    const callsBefore = shop.server.calls.length;

    model.enqueue({ text: 'Your mug ships express.' });
    const values = {
      [block('Address')]: { value: { type: 'plain_text_input', value: '1 Main St' } },
      [block('Speed')]: { value: { type: 'static_select', selected_option: { value: 'express' } } },
      [block('Copies')]: { value: { type: 'number_input', value: '2' } },
      [block('Gift wrap')]: { value: { type: 'checkboxes', selected_options: [{ value: 'true' }] } },
    };
    const sent = await send(modalSubmission('U0ALICE', view, values));
    expect(sent.status).toBe(200);
    await app.settle();
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
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.update'))).toContain('answered by <@U0ALICE>');

    // Answered once: a later click changes nothing.
    await send(questionClick('U0ALICE', 'butler_input_decline', question));
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.postEphemeral'))).toContain('closed');
    expect(shop.server.calls.length).toBe(callsBefore + 1);
  });

  it('reminds the requester once, in a direct message with the form, after the approval reminder time', async () => {
    const { fake, app } = suite;
    await askToShip();
    const [wait] = await app.butler.database.db
      .update(inputWaits)
      .set({ createdAt: new Date(Date.now() - 2 * 3_600_000) })
      .where(eq(inputWaits.status, 'waiting'))
      .returning();
    const inDirect = () =>
      fake
        .callsTo('chat.postMessage')
        .filter(
          (call) =>
            call.args.channel === 'D0ALICE' &&
            JSON.stringify(call.args.blocks ?? '').includes(String(wait?.id)),
        );
    await expect.poll(() => inDirect().length, { timeout: 10_000 }).toBe(1);
    expect(JSON.stringify(fake.callsTo('conversations.open'))).toContain('U0ALICE');
    // Reminded once: later sweeps send nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(inDirect()).toHaveLength(1);
  });

  it('declines with a click, and the call is told so', async () => {
    const { fake, model, app } = suite;
    const question = await askToShip();
    model.enqueue({ text: 'Not shipped.' });
    await send(questionClick('U0ALICE', 'butler_input_decline', question));
    await app.settle();
    expect(shop.server.calls.at(-1)).toMatchObject({ inputResponses: { shipping: { action: 'decline' } } });
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.update'))).toContain('declined by <@U0ALICE>');
  });
});
