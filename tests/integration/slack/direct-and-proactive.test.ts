import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { asJson, directMessage, envelope, postToSlack, team } from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

/**
 * Slack for scheduled tasks, through the running Butler with real Bolt and Web API clients: a person's time zone
 * from their profile, a run that answers no message (posted where its conversation is, without a stream it
 * cannot have or an indicator on a message that does not exist), and "remind me" opening the person's DM.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model, undefined, { config: { schedules: { checkEvery: '100ms' } } });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const alice = { platform: 'slack' as const, id: 'U0ALICE', name: 'Alice', timezone: 'Europe/Berlin' };
const dmMain: ConversationAddress = {
  platform: 'slack',
  workspace: team,
  channel: 'D0ALICE',
  thread: 'main',
};

/** The model answers after the working indicator's delay (500 ms), so an indicator would have shown. */
const slowly = (text: string) => async () => {
  await new Promise((resolve) => setTimeout(resolve, 700));
  return { text };
};

/** A task due in a second, asked by Alice (no chat message behind it unless `anchor`). */
function scheduleRun(address: ConversationAddress, prompt: string, anchor?: string) {
  return app.butler.schedules.create({
    creator: alice,
    address,
    prompt,
    at: 'PT1S',
    isDirect: address.channel.startsWith('D'),
    ...(anchor ? { anchor } : {}),
    source: 'chat',
  });
}

const butlerPosts = (channel: string) =>
  [...fake.messages.values()].filter((message) => message.channel === channel && message.user === botUserId);

/** Calls that need a message or thread to act on: none may go out for a run with neither. */
const indicatorMethods = [
  'chat.startStream',
  'reactions.add',
  'reactions.remove',
  'assistant.threads.setStatus',
  'agents.sessions.setStatus',
];
const indicatorCalls = () => indicatorMethods.flatMap((method) => fake.callsTo(method));

describe(`Slack time zones and scheduled runs (${databaseKind})`, () => {
  it("gives the model the sender's profile time zone from the users.info answer that names them, asked once", async () => {
    fake.users.set('U0TZ', { name: 'tess', displayName: 'Tess', tz: 'America/New_York' });
    model.enqueue({ text: 'Noted.' }, { text: 'Noted again.' });
    const url = `${app.url}/slack/events`;
    await postToSlack(url, asJson(envelope(directMessage({ ts: freshTs(), user: 'U0TZ', text: 'hi' }))));
    await app.settle();
    await postToSlack(url, asJson(envelope(directMessage({ ts: freshTs(), user: 'U0TZ', text: 'again' }))));
    await app.settle();
    const system = String(model.requests[0]?.messages[0]?.content);
    expect(system).toMatch(/The person's time zone is America\/New_York: .* there now\./);
    expect(String(model.requests[1]?.messages[0]?.content)).toContain('America/New_York');
    expect(fake.callsTo('users.info').filter((call) => call.args.user === 'U0TZ')).toHaveLength(1);
  });

  it('leaves out a profile time zone that is not an IANA name', async () => {
    fake.users.set('U0ODD', { name: 'odd', displayName: 'Odd', tz: 'Mars/Olympus_Mons' });
    model.enqueue({ text: 'Hello.' });
    await postToSlack(
      `${app.url}/slack/events`,
      asJson(envelope(directMessage({ ts: freshTs(), user: 'U0ODD', text: 'hi' }))),
    );
    await app.settle();
    const system = String(model.requests[0]?.messages[0]?.content);
    expect(system).not.toContain('Mars/Olympus_Mons');
    expect(system).not.toMatch(/The person's time zone is/);
  });

  it("posts a run in a DM's top level there, without trying a stream or showing an indicator", async () => {
    model.enqueue(slowly('Time to **stretch**, Alice.'));
    await scheduleRun(dmMain, 'Remind me to stretch');
    const [post] = await fake.waitFor(() => {
      const posts = butlerPosts('D0ALICE');
      return posts.length > 0 && posts;
    }, 10_000);
    await app.settle();
    expect(post && [post.threadTs, shownText(post)]).toEqual([undefined, 'Time to **stretch**, Alice.']);
    expect(butlerPosts('D0ALICE')).toHaveLength(1);
    expect(indicatorCalls()).toEqual([]);
  });

  it('posts a run under its anchor in a DM in the thread of that message, streamed', async () => {
    const anchor = freshTs();
    fake.seedMessage({ channel: 'D0ALICE', ts: anchor, user: 'U0ALICE', text: 'remind me later' });
    model.enqueue({ text: 'Later is now.' });
    await scheduleRun(dmMain, 'Remind me later', anchor);
    await fake.waitFor(() => butlerPosts('D0ALICE').length > 0, 10_000);
    await app.settle();
    expect(butlerPosts('D0ALICE').map((message) => [message.threadTs, shownText(message)])).toEqual([
      [anchor, 'Later is now.'],
    ]);
    expect(fake.callsTo('chat.startStream')[0]?.args).toMatchObject({
      channel: 'D0ALICE',
      thread_ts: anchor,
    });
  });

  it('posts a run in a channel thread in that thread, streamed to its creator, with no reaction', async () => {
    const root = freshTs();
    fake.seedMessage({ channel: 'C0GENERAL', ts: root, user: 'U0BOB', text: 'deploy thread' });
    model.enqueue(slowly('The deploy went out.'));
    await scheduleRun(
      { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: root },
      'Check the deploy',
    );
    await fake.waitFor(() => butlerPosts('C0GENERAL').length > 0, 10_000);
    await app.settle();
    expect(butlerPosts('C0GENERAL').map((message) => [message.threadTs, shownText(message)])).toEqual([
      [root, 'The deploy went out.'],
    ]);
    expect(fake.callsTo('chat.startStream')[0]?.args).toMatchObject({
      channel: 'C0GENERAL',
      thread_ts: root,
      recipient_user_id: 'U0ALICE',
      recipient_team_id: team,
    });
    expect(fake.callsTo('reactions.add')).toEqual([]);
  });

  it("posts a channel's config-style run (thread main) at the channel's top level", async () => {
    model.enqueue({ text: 'Morning digest: all quiet.' });
    await scheduleRun(
      { platform: 'slack', workspace: team, channel: 'C0OPS', thread: 'main' },
      'Post the digest',
    );
    await fake.waitFor(() => butlerPosts('C0OPS').length > 0, 10_000);
    await app.settle();
    expect(butlerPosts('C0OPS').map((message) => [message.threadTs, shownText(message)])).toEqual([
      [undefined, 'Morning digest: all quiet.'],
    ]);
    expect(indicatorCalls()).toEqual([]);
  });

  it("posts the approval card of a run's risky call at the DM's top level", async () => {
    model.enqueue({
      toolCalls: [{ id: 'call_run_restart', name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    await scheduleRun(dmMain, 'Restart the api');
    const card = await fake.waitFor(
      () => butlerPosts('D0ALICE').find((message) => JSON.stringify(message.blocks).includes('actions')),
      10_000,
    );
    await app.settle();
    expect(card.threadTs).toBeUndefined();
    expect(card.text).toContain('restart_service');
  });

  it('"remind me" from a channel opens the DM, leaves an inert note at its top level, and runs there', async () => {
    fake.users.set('U0ALICE', { name: 'alice', displayName: 'Alice' });
    const channelThread = {
      platform: 'slack' as const,
      workspace: team,
      channel: 'C0GENERAL',
      thread: freshTs(),
    };
    model.enqueue({ text: 'Stand-up in 5 minutes.' });
    const { schedule, confirmation } = await app.butler.schedules.create({
      creator: alice,
      address: channelThread,
      prompt: 'Tell <!channel> about stand-up',
      at: 'PT1S',
      isDirect: false,
      direct: true,
      source: 'chat',
    });
    expect(confirmation).toMatch(/in your direct chat with me/);
    expect(schedule.conversationKey).toBe(`slack:${team}:D0ALICE:main`);
    expect(fake.callsTo('conversations.open').map((call) => call.args.users)).toEqual(['U0ALICE']);
    const [note] = butlerPosts('D0ALICE');
    expect(note?.threadTs).toBeUndefined();
    expect(note?.text).toMatch(
      /^I'll post your scheduled task here, next at .*: "Tell &lt;!channel&gt; about stand-up"$/,
    );

    await fake.waitFor(() => butlerPosts('D0ALICE').length > 1, 10_000);
    await app.settle();
    const run = butlerPosts('D0ALICE')[1];
    expect(run && [run.threadTs, shownText(run)]).toEqual([undefined, 'Stand-up in 5 minutes.']);
    expect(butlerPosts('C0GENERAL')).toEqual([]);
  });

  it('"remind me" fails with the reason when Slack will not open the DM, and posts nothing', async () => {
    fake.failNext('conversations.open', { error: 'missing_scope' });
    await expect(
      app.butler.schedules.create({
        creator: alice,
        address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: freshTs() },
        prompt: 'Remind me to leave',
        at: 'PT1H',
        isDirect: false,
        direct: true,
        source: 'chat',
      }),
    ).rejects.toThrow(/conversations\.open failed: missing_scope/);
    expect(fake.callsTo('chat.postMessage')).toEqual([]);
  });
});
