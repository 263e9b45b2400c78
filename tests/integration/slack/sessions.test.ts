import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  directMessage,
  envelope,
  postToSlack,
  userMessage,
} from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

/**
 * Butler as a Slack agent: each thread it answers is an agent session (processing while a turn runs, then
 * active, suspended while an approval waits), with the working indicators as the fallback where Slack has no
 * sessions; suggested prompts when the agent container opens.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;

const prompts = [
  { title: 'What can you do?', message: 'What can you do, and what needs approval?' },
  { title: 'Deploy status', message: 'How is the latest deploy doing?' },
];
// The working indicator would show at once: where a session shows the turn, it must not.
const options = {
  config: { slack: { suggestedPrompts: prompts }, worker: { workingIndicatorMilliseconds: 0 } },
};

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(fake, model, tools, options);
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await tools.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.agents.available = true;
  model.reset();
  tools.requests.length = 0;
  fake.users.set('U0BOB', { name: 'bob', displayName: 'Bob' });
});

const send = (target: TestButler, event: Record<string, unknown>) =>
  postToSlack(`${target.url}/slack/events`, asJson(envelope(event)));

const sessionCalls = () => fake.callsTo('agents.sessions.setStatus');
const indexOf = (method: string, status?: string) =>
  fake.calls.findIndex((call) => call.method === method && (!status || call.args.status === status));

describe('agent sessions', () => {
  it('shows a turn as processing, titled and with its initiator, for the whole streamed reply, then active', async () => {
    model.enqueue({
      text: 'The deploy is green.',
      chunks: ['The deploy ', 'is ', 'green.'],
      chunkDelayMs: 30,
    });
    const ts = freshTs();
    await send(app, appMention({ ts, text: `<@${botUserId}> ask <@U0BOB> about the @channel deploy` }));
    await app.settle();

    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'active']);
    const session = fake.agents.sessions.get(`C0GENERAL:${ts}`);
    // Butler's own mention is gone; the others show but can no longer ping anyone.
    expect(session?.title).toBe('ask <\u200b@U0BOB> about the @\u2060channel deploy');
    expect(session?.initiator).toBe('U0ALICE');
    // Processing from before the stream starts until it ends: Slack's stop button covers the reply. The stream's
    // last stop makes the session active (`session_status: active` on it): no call of its own.
    expect(indexOf('agents.sessions.setStatus', 'processing')).toBeLessThan(indexOf('chat.startStream'));
    expect(indexOf('agents.sessions.setStatus', 'active')).toBe(-1);
    expect(fake.callsTo('chat.stopStream').at(-1)?.args.session_status).toBe('active');
    expect(fake.callsTo('reactions.add')).toHaveLength(0);

    model.enqueue({ text: 'About ten minutes.' });
    await send(app, userMessage({ ts: freshTs(), threadTs: ts, text: 'how long until it is done?' }));
    await app.settle();
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'active', 'processing', 'active']);
    // Only the thread's first turn names the session.
    expect(sessionCalls()[2]?.args.title).toBeUndefined();
    expect(fake.agents.sessions.get(`C0GENERAL:${ts}`)?.title).toBe(session?.title);
  });

  it('never holds a turn for its status: the turn ends, its reply whole, while Slack still takes the status', async () => {
    fake.failNext('agents.sessions.setStatus', { delayMs: 5_000 });
    model.enqueue({ text: 'Still here.' });
    const ts = freshTs();
    await send(app, appMention({ ts, text: `<@${botUserId}> are you there?` }));
    // The turn ends (its event done, its worker slot free) while Slack has not answered the status yet.
    await app.settle(10_000, { cosmetic: false });
    const reply = fake.threadMessages('C0GENERAL', ts).filter((message) => message.user === botUserId);
    expect(reply.map((message) => shownText(message)).join('')).toBe('Still here.');
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual([]);
    // Then the session shows, and ends: in order.
    await app.settle();
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'active']);
  });

  it('gives each top-level DM message a session of its own, in the thread its reply goes to', async () => {
    const first = freshTs();
    const second = freshTs();
    model.enqueue({ text: 'Hello!' }, { text: 'Sure.' });
    await send(app, directMessage({ ts: first, text: 'hi Butler' }));
    await app.settle();
    await send(app, directMessage({ ts: second, text: 'summarise **yesterday**' }));
    await app.settle();

    expect(fake.agents.statusesOf('D0ALICE', first)).toEqual(['processing', 'active']);
    expect(fake.agents.sessions.get(`D0ALICE:${second}`)).toMatchObject({
      title: 'summarise yesterday',
      statuses: ['processing', 'active'],
    });
    expect(fake.callsTo('assistant.threads.setStatus')).toHaveLength(0);
  });

  it('suspends the session while an approval waits, and processes the continuation', async () => {
    model.enqueue({
      toolCalls: [{ id: 'call_restart', name: 'restart_service', arguments: '{"service":"payments-api"}' }],
    });
    const ts = freshTs();
    await send(app, appMention({ ts, text: `<@${botUserId}> restart payments-api` }));
    await app.settle();
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'suspended']);

    const card = fake
      .callsTo('chat.postMessage')
      .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'));
    const cardTs = fake
      .threadMessages('C0GENERAL', ts)
      .find((message) => message.blocks === card?.args.blocks)?.ts;
    const blocks = card?.args.blocks as Array<{ type: string; elements?: Array<{ value?: string }> }>;
    const approvalId = blocks.find((block) => block.type === 'actions')?.elements?.[0]?.value ?? '';
    model.enqueue({ text: 'payments-api restarted.' });
    const click = blockActions({
      approvalId,
      actionId: 'butler_approve',
      messageTs: cardTs ?? '',
      threadTs: ts,
    });
    await postToSlack(`${app.url}/slack/events`, asForm(click));
    await waitFor(() => fake.agents.statusesOf('C0GENERAL', ts).length === 4 || undefined, 10_000);
    await app.settle();

    expect(tools.requests).toHaveLength(1);
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual([
      'processing',
      'suspended',
      'processing',
      'active',
    ]);
  });

  it('takes the session out of processing when its stop button stops the turn', async () => {
    model.enqueue({
      text: 'x',
      chunks: Array.from({ length: 200 }, (_, index) => `step${index} `),
      chunkDelayMs: 50,
    });
    const ts = freshTs();
    await send(app, appMention({ ts, text: `<@${botUserId}> walk me through everything` }));
    await waitFor(() => fake.callsTo('chat.appendStream').length >= 2 || undefined, 10_000);
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing']);

    const stop = { type: 'agent_session_stopped', channel: 'C0GENERAL', thread_ts: ts, user: 'U0BOB' };
    await send(app, { ...stop, streaming_message_ts: [], event_ts: freshTs() });
    await app.settle();

    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'active']);
    const reply = fake.threadMessages('C0GENERAL', ts).filter((message) => message.user === botUserId);
    expect(reply.map((message) => shownText(message)).join('\n')).toMatch(/_Stopped by Bob\._$/);
  });
});

describe('agent sessions when nothing runs, and where Slack turned them off', () => {
  it('moves a session out of processing when its stop button is pressed after the turn is gone', async () => {
    // A session Slack shows as processing (say, Butler restarted mid-turn): nothing runs here now.
    const ts = freshTs();
    fake.agents.sessions.set(`C0GENERAL:${ts}`, {
      channel: 'C0GENERAL',
      threadTs: ts,
      title: 'left behind',
      initiator: 'U0ALICE',
      statuses: ['processing'],
    });
    const stop = { type: 'agent_session_stopped', channel: 'C0GENERAL', thread_ts: ts, user: 'U0ALICE' };
    await send(app, { ...stop, streaming_message_ts: [], event_ts: freshTs() });
    await fake.waitFor(() => fake.agents.statusesOf('C0GENERAL', ts).length === 2 || undefined);
    expect(fake.agents.statusesOf('C0GENERAL', ts)).toEqual(['processing', 'active']);
  });

  it('stops asking for sessions where Slack answers feature_disabled (agent tasks off), and shows the reaction', async () => {
    fake.agents.available = false;
    fake.agents.unavailableError = 'feature_disabled';
    const plain = await startSlackButler(fake, model, tools, options);
    try {
      for (const text of ['first?', 'second?']) {
        model.enqueue({ text: 'Quiet.', chunks: ['Qui', 'et.'], chunkDelayMs: 100 });
        const ts = freshTs();
        fake.seedMessage({ channel: 'C0GENERAL', ts, user: 'U0ALICE', text });
        await send(plain, appMention({ ts, text: `<@${botUserId}> ${text}` }));
        await plain.settle();
      }
    } finally {
      await plain.close();
    }
    expect(sessionCalls()).toHaveLength(1);
    expect(fake.callsTo('reactions.add')).toHaveLength(2);
  });

  it("names a Slack Connect guest's own team as the stream's recipient team", async () => {
    model.enqueue({
      text: 'Hello from the other side.',
      chunks: ['Hello ', 'from the other side.'],
      chunkDelayMs: 20,
    });
    const ts = freshTs();
    await send(app, {
      ...appMention({ ts, user: 'U0GUEST', text: `<@${botUserId}> hi` }),
      user_team: 'T0PARTNER',
    });
    await app.settle();
    const start = fake.callsTo('chat.startStream').find((call) => call.args.thread_ts === ts);
    expect(start?.args).toMatchObject({ recipient_user_id: 'U0GUEST', recipient_team_id: 'T0PARTNER' });
  });
});

describe('suggested prompts', () => {
  it("offers an agent app's prompts when its Messages tab opens (app_home_opened, tab messages)", async () => {
    await send(app, {
      type: 'app_home_opened',
      user: 'U0BOB',
      channel: 'D0BOB',
      tab: 'messages',
      event_ts: freshTs(),
    });
    await fake.waitFor(() => fake.agents.suggestedPrompts.get('D0BOB'));
    expect(fake.agents.suggestedPrompts.get('D0BOB')).toEqual({ title: 'Try asking Butler', prompts });
  });

  it('offers the configured prompts when the agent container opens, and names the channel when it moves', async () => {
    const thread = { user_id: 'U0ALICE', channel_id: 'D0ALICE', thread_ts: freshTs() };
    await send(app, {
      type: 'assistant_thread_started',
      assistant_thread: { ...thread, context: {} },
      event_ts: freshTs(),
    });
    await fake.waitFor(() => fake.agents.suggestedPrompts.get('D0ALICE'));
    expect(fake.agents.suggestedPrompts.get('D0ALICE')).toEqual({ title: 'Try asking Butler', prompts });

    const entities = [{ type: 'slack#/types/channel_id', value: 'C0DEPLOYS', team_id: 'T0BUTLER' }];
    await send(app, {
      type: 'app_context_changed',
      channel: 'D0ALICE',
      user: 'U0ALICE',
      context: { entities },
      event_ts: freshTs(),
    });
    await fake.waitFor(() => fake.agents.suggestedPrompts.get('D0ALICE')?.title?.includes('C0DEPLOYS'));
    expect(fake.agents.suggestedPrompts.get('D0ALICE')).toEqual({
      title: 'Ask Butler about <#C0DEPLOYS>',
      prompts,
    });
  });
});

describe('where Slack has no agent sessions', () => {
  it('falls back to the working reaction, and stops asking for sessions', async () => {
    fake.agents.available = false;
    // A Butler of its own: the workspace's missing feature is remembered for as long as it runs.
    const plain = await startSlackButler(fake, model, tools, options);
    try {
      for (const text of ['what is up?', 'and now?']) {
        model.enqueue({ text: 'All quiet.', chunks: ['All ', 'quiet.'], chunkDelayMs: 100 });
        const ts = freshTs();
        fake.seedMessage({ channel: 'C0GENERAL', ts, user: 'U0ALICE', text });
        await send(plain, appMention({ ts, text: `<@${botUserId}> ${text}` }));
        await plain.settle();
      }
    } finally {
      await plain.close();
    }
    expect(sessionCalls()).toHaveLength(1);
    expect(fake.agents.sessions.size).toBe(0);
    expect(fake.callsTo('reactions.add')).toHaveLength(2);
    expect(fake.callsTo('reactions.remove')).toHaveLength(2);
  });
});
