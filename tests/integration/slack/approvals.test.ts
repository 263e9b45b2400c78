import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, type RecordedCall, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { latch } from '../../helpers/wait-for.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  directMessage,
  envelope,
  postToSlack,
  rejectSubmission,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(fake, model, tools, {
    env: { BUTLER_PUBLIC_URL: `${publicUrl}/` },
    // The sweep re-posts a card not yet posted after six sweeps: on a loaded machine, a card of 60 calls
    // could be posted twice (and the first one's buttons then refused) with the tests' 200 ms sweeps.
    config: { worker: { sweepMilliseconds: 2_000 } },
  });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await tools.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
  tools.requests.length = 0;
});

const publicUrl = 'https://butler.example.com';
const approver = { id: 'U0APPROVER', name: 'olga' };
const requester = { id: 'U0ALICE', name: 'alice' };

/** Alice asks; the model wants restart_service (high risk); Butler posts a card and parks the turn. */
async function requestRestart(): Promise<{ threadTs: string; cardTs: string; approvalId: string }> {
  model.enqueue({
    toolCalls: [
      { id: `call_${Date.now()}`, name: 'restart_service', arguments: '{"service":"payments-api"}' },
    ],
  });
  const threadTs = freshTs();
  await postToSlack(
    slackUrl,
    asJson(envelope(appMention({ ts: threadTs, text: '<@U0BUTLER> restart payments-api' }))),
  );
  await app.settle();
  const card = fake
    .callsTo('chat.postMessage')
    .filter((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'))
    .at(-1);
  if (!card) throw new Error('no approval card was posted');
  const cardTs = [...fake.messages.values()].find((message) => message.blocks === card.args.blocks)?.ts;
  const approvalId = approvalIdOf(card);
  if (!cardTs) throw new Error('approval card not stored');
  return { threadTs, cardTs, approvalId };
}

function approvalIdOf(call: RecordedCall): string {
  const blocks = call.args.blocks as Array<{ type: string; elements?: Array<{ value?: string }> }>;
  const value = blocks.find((block) => block.type === 'actions')?.elements?.[0]?.value;
  if (!value) throw new Error('card without an approval id');
  return value;
}

const click = (
  approvalId: string,
  actionId: 'butler_approve' | 'butler_reject',
  cardTs: string,
  threadTs: string,
  user = approver,
) => postToSlack(slackUrl, asForm(blockActions({ approvalId, actionId, messageTs: cardTs, threadTs, user })));

function cardUpdates(cardTs: string) {
  return fake.callsTo('chat.update').filter((call) => call.args.ts === cardTs);
}

describe('Slack approval cards through the running Butler', () => {
  it('posts the card in the thread and runs the tool once after an approver approves', async () => {
    const { threadTs, cardTs, approvalId } = await requestRestart();
    const card = fake.callsTo('chat.postMessage').find((call) => call.args.blocks)?.args;
    expect(card?.thread_ts).toBe(threadTs);
    expect(JSON.stringify(card?.blocks)).toContain('restart_service');
    expect(JSON.stringify(card?.blocks)).toContain('payments-api');
    expect(tools.requests).toHaveLength(0);

    model.enqueue({ text: 'payments-api restarted.' });
    const response = await click(approvalId, 'butler_approve', cardTs, threadTs);
    expect(response.status).toBe(200);
    await fake.waitFor(() => cardUpdates(cardTs)[0]);
    await app.settle();

    expect(tools.requests).toHaveLength(1);
    expect(JSON.stringify(cardUpdates(cardTs)[0]?.args.blocks)).toContain('Approved by olga');
    expect(JSON.stringify(cardUpdates(cardTs)[0]?.args.blocks)).not.toContain('butler_approve');
    const continuation = fake.callsTo('chat.startStream').at(-1);
    expect(continuation?.args.thread_ts).toBe(threadTs);
  });

  it("asks and goes on in a top-level DM's thread, where the reply streams", async () => {
    model.enqueue({
      text: 'Restarting needs approval.',
      toolCalls: [{ id: 'call_dm', name: 'restart_service', arguments: '{"service":"payments-api"}' }],
    });
    const ts = freshTs();
    await postToSlack(
      slackUrl,
      asJson(envelope(directMessage({ ts, text: 'restart payments-api', user: requester.id }))),
    );
    await app.settle();
    const card = fake
      .callsTo('chat.postMessage')
      .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'));
    expect(fake.callsTo('chat.startStream')[0]?.args).toMatchObject({ channel: 'D0ALICE', thread_ts: ts });
    expect(card?.args).toMatchObject({ channel: 'D0ALICE', thread_ts: ts });
    const cardTs = fake
      .threadMessages('D0ALICE', ts)
      .find((message) => message.blocks === card?.args.blocks)?.ts;

    model.enqueue({ text: 'payments-api restarted.' });
    const response = await postToSlack(
      slackUrl,
      asForm(
        blockActions({
          approvalId: card ? approvalIdOf(card) : '',
          actionId: 'butler_approve',
          messageTs: cardTs ?? '',
          threadTs: ts,
          channel: 'D0ALICE',
        }),
      ),
    );
    expect(response.status).toBe(200);
    await fake.waitFor(() => cardUpdates(cardTs ?? '')[0]);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
    expect(fake.callsTo('chat.startStream').at(-1)?.args).toMatchObject({
      channel: 'D0ALICE',
      thread_ts: ts,
    });
    expect(
      fake.threadMessages('D0ALICE', undefined).filter((message) => message.user === 'U0BUTLER'),
    ).toEqual([]);
  });

  it('tells an unauthorised clicker privately, leaves the card, and runs nothing', async () => {
    const { threadTs, cardTs, approvalId } = await requestRestart();
    await click(approvalId, 'butler_approve', cardTs, threadTs, requester);
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args).toMatchObject({ channel: 'C0GENERAL', user: requester.id });
    await app.settle();
    expect(cardUpdates(cardTs)).toHaveLength(0);
    expect(tools.requests).toHaveLength(0);
  });

  it('runs the tool once however often the card is clicked', async () => {
    const { threadTs, cardTs, approvalId } = await requestRestart();
    model.setFallback({ text: 'done' });
    const responses = await Promise.all([
      click(approvalId, 'butler_approve', cardTs, threadTs),
      click(approvalId, 'butler_approve', cardTs, threadTs),
      click(approvalId, 'butler_approve', cardTs, threadTs, { id: 'U0APPROVER', name: 'olga' }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    await fake.waitFor(() => fake.callsTo('chat.postEphemeral').length >= 2);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
    for (const update of cardUpdates(cardTs))
      expect(JSON.stringify(update.args.blocks)).toContain('Approved by olga');
  });

  it('names everyone a folded turn answers on its card, and lets none of them approve it', async () => {
    // The approver asks while Butler still answers an earlier message in the thread; Alice adds "ok".
    const threadTs = freshTs();
    // The first answer waits until both later mentions are stored, however long storing them takes.
    const firstAnswer = latch();
    model.enqueue(
      async () => {
        await firstAnswer.opened;
        return { text: 'Looking.', chunks: ['Look', 'ing.'] };
      },
      { toolCalls: [{ id: 'call_folded', name: 'restart_service', arguments: '{"service":"search"}' }] },
    );
    const mention = (ts: string, user: string, text: string) =>
      postToSlack(
        slackUrl,
        asJson(envelope(appMention({ ts, threadTs, user, text: `<@U0BUTLER> ${text}` }))),
      );
    await postToSlack(slackUrl, asJson(envelope(appMention({ ts: threadTs, text: '<@U0BUTLER> hi' }))));
    await model.waitForRequests(1);
    await mention(freshTs(), 'U0APPROVER', 'restart search please');
    await mention(freshTs(), 'U0ALICE', 'ok');
    firstAnswer.open();
    await app.settle();
    const card = fake
      .callsTo('chat.postMessage')
      .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'));
    expect(JSON.stringify(card?.args.blocks)).toContain('<@U0APPROVER> and <@U0ALICE>');
    const approvalId = approvalIdOf(card as RecordedCall);
    const cardTs =
      [...fake.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts ?? '';
    await click(approvalId, 'butler_approve', cardTs, threadTs);
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args.text).toBe('High-risk actions need an approver other than the people who asked.');
    await app.settle();
    expect(tools.requests).toHaveLength(0);
  });

  it('decides only the card a button is on, and redraws nothing from the click', async () => {
    const first = await requestRestart();
    const second = await requestRestart();
    // A click on the first card whose button value names the second request.
    await click(second.approvalId, 'butler_approve', first.cardTs, first.threadTs);
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args.text).toBe('This button does not belong to this request.');
    await app.settle();
    expect(cardUpdates(first.cardTs)).toHaveLength(0);
    expect(cardUpdates(second.cardTs)).toHaveLength(0);
    expect(tools.requests).toHaveLength(0);
    expect((await app.butler.store.approvals.get(second.approvalId))?.status).toBe('pending');
  });

  it('rejects with a reason from the modal and does not run the tool', async () => {
    const { threadTs, cardTs, approvalId } = await requestRestart();
    await click(approvalId, 'butler_reject', cardTs, threadTs);
    await fake.waitFor(() => fake.callsTo('views.open')[0]);
    model.enqueue({ text: 'Understood, I will not restart it.' });
    const response = await postToSlack(
      slackUrl,
      asForm(
        rejectSubmission({
          approvalId,
          messageTs: cardTs,
          threadTs,
          reason: 'change freeze',
          user: approver,
        }),
      ),
    );
    expect(response.status).toBe(200);
    await fake.waitFor(() => cardUpdates(cardTs)[0]);
    await app.settle();
    expect(JSON.stringify(cardUpdates(cardTs)[0]?.args.blocks)).toContain('Rejected by olga: change freeze');
    expect(tools.requests).toHaveLength(0);
    const toolResult = model.requests.at(-1)?.messages.find((message) => message.role === 'tool');
    expect(String(toolResult?.content)).toMatch(/reject/i);
  });

  it('rejects without a reason when the modal cannot open', async () => {
    const { threadTs, cardTs, approvalId } = await requestRestart();
    fake.failNext('views.open', { error: 'expired_trigger_id' });
    model.enqueue({ text: 'Not restarting.' });
    await click(approvalId, 'butler_reject', cardTs, threadTs);
    await fake.waitFor(() => cardUpdates(cardTs)[0]);
    await app.settle();
    expect(JSON.stringify(cardUpdates(cardTs)[0]?.args.blocks)).toContain('Rejected by olga');
    expect(tools.requests).toHaveLength(0);
  });
});

type Block = {
  type: string;
  block_id?: string;
  text?: { text?: string };
  elements?: Array<Record<string, unknown> & { text?: unknown }>;
};

/** The mrkdwn a person reads in sections and context blocks, entities decoded. */
function readable(blocks: unknown): string {
  return (blocks as Block[])
    .flatMap((block) => [
      block.text?.text ?? '',
      ...(block.type === 'context' ? (block.elements ?? []).map((element) => String(element.text)) : []),
    ])
    .join('\n')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function buttons(blocks: unknown): Array<Record<string, unknown>> {
  return (blocks as Block[])
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements ?? []);
}

describe('Show all arguments', () => {
  it('links a card to its request in the console, and offers no Show all when nothing was cut', async () => {
    const { approvalId } = await requestRestart();
    const card = fake.callsTo('chat.postMessage').find((call) => call.args.blocks)?.args;
    const elements = buttons(card?.blocks);
    expect(elements.find((element) => element.action_id === 'butler_open_console')).toMatchObject({
      url: `${publicUrl}/console#approval=${approvalId}`,
    });
    expect(elements.map((element) => element.action_id)).not.toContain('butler_show_arguments');
  });

  it('a card of 60 long calls says what it left out; Show all opens every argument whole and decides nothing, before and after the decision', async () => {
    // Escaped for mrkdwn, `<&>` takes 13 characters: the card must count what the stored arguments lose.
    const services = Array.from(
      { length: 60 },
      (_, index) => `svc-${index}:${'<&>'.repeat(100)}${'x'.repeat(1200)}:end-${index}`,
    );
    const wholeArguments = services.map((service) => JSON.stringify({ service }, null, 2));
    model.enqueue({
      toolCalls: services.map((service, index) => ({
        id: `call_many_${index}`,
        name: 'restart_service',
        arguments: JSON.stringify({ service }),
      })),
    });
    const threadTs = freshTs();
    await postToSlack(
      slackUrl,
      asJson(envelope(appMention({ ts: threadTs, text: '<@U0BUTLER> restart all sixty' }))),
    );
    await app.settle();
    const posted = fake
      .callsTo('chat.postMessage')
      .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve_all'));
    const approveAll = buttons(posted?.args.blocks).find(
      (element) => element.action_id === 'butler_approve_all',
    );
    const batch = await app.butler.store.approvals.listBatch(String(approveAll?.value));
    expect(batch).toHaveLength(60);
    const batchId = batch[0]?.batchId ?? '';
    // The message the request names as its card (a loaded machine may have posted it again).
    const cardTs = batch[0]?.cardMessageId ?? '';
    const card = fake.messages.get(`C0GENERAL:${cardTs}`);
    if (!card) throw new Error('the card of several calls is not in the channel');

    // The card: the calls that fit, each saying how many characters of its arguments it leaves out.
    const text = readable(card.blocks);
    const hidden = /(\d+) more calls \((\d+) pending\) did not fit/.exec(text);
    expect(Number(hidden?.[1])).toBeGreaterThan(0);
    const firstCode = text.split('```')[1] ?? '';
    const shownArguments = firstCode.slice(firstCode.indexOf('\n', 1) + 1).replace(/\n$/, '');
    expect(wholeArguments[0]?.startsWith(shownArguments)).toBe(true);
    const more = (wholeArguments[0]?.length ?? 0) - shownArguments.length;
    expect(text).toContain(
      `_… ${more.toLocaleString('en-US')} more characters: Show all arguments has them all_`,
    );
    const cardButtons = buttons(card.blocks);
    expect(cardButtons).toContainEqual(
      expect.objectContaining({ action_id: 'butler_show_arguments_batch', value: batchId }),
    );
    expect(cardButtons).toContainEqual(
      expect.objectContaining({ url: `${publicUrl}/console#batch=${batchId}` }),
    );

    const showAll = () =>
      postToSlack(
        slackUrl,
        asForm(
          blockActions({ batchId, actionId: 'butler_show_arguments_batch', messageTs: cardTs, threadTs }),
        ),
      );
    const expectEveryArgument = (view: unknown) => {
      const shown = readable((view as { blocks: unknown }).blocks);
      for (const whole of wholeArguments) expect(shown).toContain(whole);
      expect(shown).not.toContain('Not shown here');
    };

    expect((await showAll()).status).toBe(200);
    const opened = await fake.waitFor(() => fake.callsTo('views.open')[0]);
    expectEveryArgument(opened.args.view);
    await app.settle();
    // Nothing was decided, run or redrawn.
    const statuses = await app.butler.store.approvals.listBatch(batchId);
    expect(new Set(statuses.map((approval) => approval.status))).toEqual(new Set(['pending']));
    expect(cardUpdates(cardTs)).toHaveLength(0);
    expect(tools.requests).toHaveLength(0);

    // Rejected, the card still offers the arguments, and the modal shows the outcome.
    await postToSlack(
      slackUrl,
      asForm(blockActions({ batchId, actionId: 'butler_reject_all', messageTs: cardTs, threadTs })),
    );
    await fake.waitFor(() => fake.callsTo('views.open')[1]);
    model.enqueue({ text: 'Not restarting any.' });
    await postToSlack(
      slackUrl,
      asForm(rejectSubmission({ batchId, messageTs: cardTs, threadTs, reason: 'freeze', user: approver })),
    );
    const decided = await fake.waitFor(() => cardUpdates(cardTs)[0]);
    await app.settle();
    expect(buttons(decided.args.blocks).map((element) => element.action_id)).toContain(
      'butler_show_arguments_batch',
    );
    await showAll();
    const again = await fake.waitFor(() => fake.callsTo('views.open')[2]);
    expectEveryArgument(again.args.view);
    expect(readable((again.args.view as { blocks: unknown }).blocks)).toContain('Rejected by olga: freeze');
    expect(tools.requests).toHaveLength(0);
  });
});
