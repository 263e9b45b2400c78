import { describe, expect, it } from 'vitest';
import { toolResultOf } from '../../helpers/api-questions.js';
import { shownText } from '../../helpers/fake-slack-api.js';
import { start2025QuestionsHttpServer } from '../../helpers/mcp-2025-questions-server.js';
import { useShopServer } from '../../helpers/shop-server.js';
import { modalSubmission, openedModal, questionClick, questionIn } from '../../helpers/slack-input-forms.js';
import { appMention, asForm, asJson, envelope, postToSlack } from '../../unit/slack/payloads.js';
import { freshTs, useSlackButler } from '../slack/slack-butler.js';

/**
 * A 2025-11-25 MCP server's question on Slack, asked over its session while the call runs: the same message
 * with Fill in / Decline / Cancel in the thread, posted while the turn still runs; only the requester answers,
 * through the same modal and checks as a 2026 question; the answer goes back over the session and the same turn
 * goes on in the thread (no second turn).
 */

const shop = useShopServer(start2025QuestionsHttpServer);
const suite = useSlackButler({
  config: shop.config,
  prepare: (fake) => fake.users.set('U0ALICE', { name: 'alice' }),
});

const send = (payload: unknown) => postToSlack(suite.url, asForm(payload));

/** Alice asks Butler to ship a mug; the server asks where, mid-call. Returns the question once it is posted. */
async function askToShip(then: string) {
  suite.model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  suite.model.enqueue({ text: then });
  const threadTs = freshTs();
  await postToSlack(suite.url, asJson(envelope(appMention({ ts: threadTs, text: 'ship a mug' }))));
  return suite.fake.waitFor(() => questionIn(suite.fake, threadTs), 20_000);
}

/** Butler's reply in the thread: the message its turn streams into. */
const replyIn = (threadTs: string) =>
  suite.fake.threadMessages('C0GENERAL', threadTs).find((message) => message.markdown || message.streaming);

describe('a 2025 server’s question mid-call on Slack', () => {
  it('is answered by the requester in the modal, and the same turn goes on with the answer', async () => {
    const { fake, model, app } = suite;
    fake.agents.available = true;
    const question = await askToShip('Your mug ships express.');
    expect(question.blocks).toContain('*shop* asks <@U0ALICE>: Where should the mug go?');
    expect(question.blocks).toContain('butler_input_decline');
    expect(question.blocks).toContain('butler_input_cancel');
    // The turn still runs, its call open: the reply streams what was asked, and the server has no answer yet.
    const streaming = await fake.waitFor(
      () => replyIn(question.threadTs)?.streaming && replyIn(question.threadTs),
    );
    expect(shownText(streaming)).toBe('shop asks alice "Where should the mug go?".');
    expect(shop.server.calls).toEqual([]);
    // The agent session shows the turn waiting on Alice.
    await fake.waitFor(() => fake.agents.statusesOf('C0GENERAL', question.threadTs).at(-1) === 'suspended');

    // Bob may not open it: he is told, and nothing else happens.
    await send(questionClick('U0BOB', 'butler_input_fill', question));
    await fake.waitFor(() => fake.callsTo('chat.postEphemeral').length === 1);
    expect(fake.callsTo('chat.postEphemeral')[0]?.args).toMatchObject({ user: 'U0BOB' });
    expect(String(fake.callsTo('chat.postEphemeral')[0]?.args.text)).toContain('Only');
    expect(fake.callsTo('views.open')).toHaveLength(0);
    expect(fake.callsTo('chat.update')).toHaveLength(0);

    await send(questionClick('U0ALICE', 'butler_input_fill', question));
    await fake.waitFor(() => fake.callsTo('views.open').length === 1);
    expect(fake.callsTo('views.open')[0]?.args.trigger_id).toBe('1337.U0ALICE.input');
    const { view, block, element } = openedModal(fake);
    // The modal shows the form's defaults filled in.
    expect(element('Copies')).toMatchObject({ type: 'number_input', initial_value: '1' });
    expect(element('Speed')).toMatchObject({ initial_option: { value: 'standard' } });

    const address = (value: string) => ({ value: { type: 'plain_text_input', value } });
    const express = { value: { type: 'static_select', selected_option: { value: 'express' } } };
    const copies = (value: unknown) => ({ value: { type: 'number_input', value } });
    const unticked = { value: { type: 'checkboxes', selected_options: [] } };
    const wrong = await send(
      modalSubmission('U0ALICE', view, {
        [block('Address')]: address('x'),
        [block('Speed')]: express,
        [block('Copies')]: copies('9'),
        [block('Gift wrap')]: unticked,
      }),
    );
    expect(await wrong.json()).toEqual({
      response_action: 'errors',
      errors: { [block('Address')]: 'Enter at least 3 characters.', [block('Copies')]: 'Enter 5 or less.' },
    });
    expect(shop.server.calls).toEqual([]);

    // Alice types the address and picks express; Slack sends the rest as the modal filled them in.
    const values = {
      [block('Address')]: address('1 Main St'),
      [block('Speed')]: express,
      [block('Copies')]: copies(element('Copies')?.initial_value),
      [block('Gift wrap')]: unticked,
    };
    expect((await send(modalSubmission('U0ALICE', view, values))).status).toBe(200);
    await app.settle(20_000);
    const content = { address: '1 Main St', speed: 'express', copies: 1, gift: false };
    expect(shop.server.calls).toEqual([
      { tool: 'ship', args: { item: 'mug' }, answer: { action: 'accept', content } },
    ]);
    // One turn: the model was asked twice (the call, then its result), and the reply ends with its text.
    expect(model.requests).toHaveLength(2);
    expect(toolResultOf(model, 'call_ship')).toBe('Shipping the mug to 1 Main St (express, 1 copies).');
    expect(replyIn(question.threadTs)).toMatchObject({ ts: streaming.ts, streaming: false });
    expect(shownText(streaming)).toMatch(
      /^shop asks alice "Where should the mug go\?"\.\n\nYour mug ships express\.$/,
    );
    expect(JSON.stringify(fake.callsTo('chat.update'))).toContain('answered by <@U0ALICE>');
    // Suspended while it waited, active once the turn ended (a `processing` between may be coalesced away).
    const statuses = fake.agents.statusesOf('C0GENERAL', question.threadTs);
    expect(statuses.slice(0, 2)).toEqual(['processing', 'suspended']);
    expect(statuses.at(-1)).toBe('active');
  }, 60_000);

  it('tells the server `decline` when the requester declines', async () => {
    const { fake, model, app } = suite;
    const question = await askToShip('Not shipped.');
    await send(questionClick('U0ALICE', 'butler_input_decline', question));
    await app.settle(20_000);
    expect(shop.server.calls).toEqual([
      expect.objectContaining({ tool: 'ship', answer: { action: 'decline' } }),
    ]);
    expect(toolResultOf(model, 'call_ship')).toBe('The person declined to say where the mug goes.');
    const reply = replyIn(question.threadTs);
    expect(reply && shownText(reply)).toMatch(
      /^shop asks alice "Where should the mug go\?"\.\n\nNot shipped\.$/,
    );
    expect(JSON.stringify(fake.callsTo('chat.update'))).toContain('declined by <@U0ALICE>');
  }, 60_000);
});
