import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inputWaits } from '../../../src/storage/schema.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import { appMention, asForm, asJson, envelope, postToSlack, team } from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from '../slack/slack-butler.js';

/**
 * A 2026-07-28 MCP server's question on Slack, through Bolt against the fake Web API: a message in the thread
 * with Fill in / Decline / Cancel, the modal Fill in opens, field errors on a wrong submission, and the call
 * made again with the requester's answer; anyone else is refused.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let shop: Awaited<ReturnType<typeof start2026HttpServer>>;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  fake.users.set('U0ALICE', { name: 'alice' });
  model = await startFakeModelServer();
  shop = await start2026HttpServer();
  app = await startSlackButler(fake, model, undefined, {
    config: {
      mcpServers: [{ name: 'shop', url: shop.url, tools: { risk: { ship: 'low' } } }],
      approvalPolicy: { remindAfter: '1h' },
    },
  });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await shop.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const person = (id: string) => ({ id, username: id.toLowerCase(), name: id.toLowerCase(), team_id: team });

function click(options: {
  user: string;
  actionId: string;
  value: string;
  messageTs: string;
  threadTs: string;
}) {
  return {
    type: 'block_actions',
    user: person(options.user),
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: options.messageTs,
      channel_id: 'C0GENERAL',
      is_ephemeral: false,
      thread_ts: options.threadTs,
    },
    trigger_id: `1337.${options.user}.input`,
    team: { id: team, domain: 'butler-test' },
    channel: { id: 'C0GENERAL', name: 'general' },
    message: { type: 'message', ts: options.messageTs, thread_ts: options.threadTs, text: 'question' },
    response_url: 'https://hooks.slack.com/actions/T0BUTLER/2/def',
    actions: [
      { type: 'button', action_id: options.actionId, block_id: 'b', value: options.value, action_ts: '1' },
    ],
  };
}

function submission(user: string, view: Record<string, unknown>, values: Record<string, unknown>) {
  return {
    type: 'view_submission',
    team: { id: team, domain: 'butler-test' },
    user: person(user),
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    trigger_id: '1337.submit',
    view: {
      id: 'V0FORM',
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      state: { values },
    },
    response_urls: [],
  };
}

/** Alice asks Butler to ship a mug; the server asks where. Returns the question's message and its button value. */
async function askToShip() {
  model.enqueue({ toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] });
  const threadTs = freshTs();
  await postToSlack(slackUrl, asJson(envelope(appMention({ ts: threadTs, text: 'ship a mug' }))));
  await app.settle();
  const question = fake
    .callsTo('chat.postMessage')
    .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_input_fill'));
  if (!question) throw new Error('no question was posted');
  const blocks = JSON.stringify(question.args.blocks);
  const value = String(/"value":"(\{[^"]*(?:\\"[^"]*)*\})"/.exec(blocks)?.[1] ?? '').replaceAll('\\"', '"');
  const messageTs = [...fake.messages.values()].find(
    (message) =>
      message.threadTs === threadTs && JSON.stringify(message.blocks ?? '').includes('butler_input_fill'),
  )?.ts;
  if (!messageTs) throw new Error('no question message');
  return { threadTs, messageTs, value, blocks };
}

describe('a server’s question on Slack', () => {
  it('is a message in the thread; only the requester fills in the modal; errors stay on the fields', async () => {
    const { threadTs, messageTs, value, blocks } = await askToShip();
    expect(blocks).toContain('*shop* asks <@U0ALICE>: Where should the mug go?');
    expect(blocks).toContain('butler_input_decline');

    // Bob may not open it: he is told, and no modal opens.
    await postToSlack(
      slackUrl,
      asForm(click({ user: 'U0BOB', actionId: 'butler_input_fill', value, messageTs, threadTs })),
    );
    await expect.poll(() => fake.callsTo('chat.postEphemeral').length).toBe(1);
    expect(fake.callsTo('chat.postEphemeral')[0]?.args).toMatchObject({ user: 'U0BOB' });
    expect(String(fake.callsTo('chat.postEphemeral')[0]?.args.text)).toContain('Only');
    expect(fake.callsTo('views.open')).toHaveLength(0);

    await postToSlack(
      slackUrl,
      asForm(click({ user: 'U0ALICE', actionId: 'butler_input_fill', value, messageTs, threadTs })),
    );
    await expect.poll(() => fake.callsTo('views.open').length).toBe(1);
    const view = fake.callsTo('views.open')[0]?.args.view as Record<string, unknown>;
    const inputs = (view.blocks as Array<Record<string, unknown>>).filter((block) => block.type === 'input');
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
    // Fields are named by position in the modal: find each one's block.
    const block = (label: string) =>
      String(inputs.find((each) => (each.label as { text: string }).text === label)?.block_id);

    const wrong = await postToSlack(
      slackUrl,
      asForm(
        submission('U0ALICE', view, {
          [block('Address')]: { value: { type: 'plain_text_input', value: 'x' } },
        }),
      ),
    );
    expect(await wrong.json()).toEqual({
      response_action: 'errors',
      errors: { [block('Address')]: 'Enter at least 3 characters.', [block('Speed')]: 'Required.' },
    });
    const stranger = await postToSlack(
      slackUrl,
      asForm(
        submission('U0BOB', view, { field_0: { value: { type: 'plain_text_input', value: '9 Elsewhere' } } }),
      ),
    );
    expect(stranger.status).toBe(200);
    const callsBefore = shop.calls.length;

    model.enqueue({ text: 'Your mug ships express.' });
    const values = {
      [block('Address')]: { value: { type: 'plain_text_input', value: '1 Main St' } },
      [block('Speed')]: { value: { type: 'static_select', selected_option: { value: 'express' } } },
      [block('Copies')]: { value: { type: 'number_input', value: '2' } },
      [block('Gift wrap')]: { value: { type: 'checkboxes', selected_options: [{ value: 'true' }] } },
    };
    const sent = await postToSlack(slackUrl, asForm(submission('U0ALICE', view, values)));
    expect(sent.status).toBe(200);
    await app.settle();
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
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.update'))).toContain('answered by <@U0ALICE>');

    // Answered once: a later click changes nothing.
    await postToSlack(
      slackUrl,
      asForm(click({ user: 'U0ALICE', actionId: 'butler_input_decline', value, messageTs, threadTs })),
    );
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.postEphemeral'))).toContain('closed');
    expect(shop.calls.length).toBe(callsBefore + 1);
  });

  it('reminds the requester once, in a direct message with the form, after the approval reminder time', async () => {
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
    const { threadTs, messageTs, value } = await askToShip();
    model.enqueue({ text: 'Not shipped.' });
    await postToSlack(
      slackUrl,
      asForm(click({ user: 'U0ALICE', actionId: 'butler_input_decline', value, messageTs, threadTs })),
    );
    await app.settle();
    expect(shop.calls.at(-1)).toMatchObject({ inputResponses: { shipping: { action: 'decline' } } });
    await expect.poll(() => JSON.stringify(fake.callsTo('chat.update'))).toContain('declined by <@U0ALICE>');
  });
});
