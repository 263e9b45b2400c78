import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import { createCapabilities, defaultReplyTuning } from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { botId, botUserId, team } from './payloads.js';

/** Slack replies sharing one workspace's rate budgets (rate-tiers.ts; platforms.md "Checked since"). */

let fake: FakeSlackApi;

beforeEach(async () => {
  fake = await startFakeSlackApi();
});
afterEach(async () => {
  await fake.close();
});

function target(channel: string, thread: string): ReplyTarget {
  return {
    address: { platform: 'slack', workspace: team, channel, thread },
    replyTo: thread,
    userId: 'U0ALICE',
  };
}

function adapter(): ChatAdapter {
  return createSlackAdapter({
    api: createSlackApi({ token: 'xoxb-test', apiUrl: fake.url, logger: silentLogger, minRetryDelayMs: 10 }),
    logger: silentLogger,
    capabilities: createCapabilities(),
    tuning: { ...defaultReplyTuning, updateIntervalMs: 100, streamIntervalMs: 20 },
    identity: () => ({ userId: botUserId, botId, teamId: team }),
  });
}

describe('Slack replies within the rate tiers', () => {
  it("keeps a 429 on chat.update from holding another conversation's chat.startStream", async () => {
    const slack = adapter();
    fake.streaming = false;
    const edited = await slack.openReply(target('C0OPS', '1700000000.000100'));
    await edited.append('Checking the deploy');
    await fake.waitFor(() => fake.callsTo('chat.postMessage')[0]);
    fake.failNext('chat.update', { rateLimitedSeconds: 2 });
    let limitedAt = 0;
    fake.afterNext('chat.update', () => {
      limitedAt = Date.now();
    });
    await edited.append(', still checking');
    await fake.waitFor(() => limitedAt > 0, 5000);
    await new Promise((resolve) => setTimeout(resolve, 50));

    fake.streaming = true;
    const opened = Date.now();
    const other = await slack.openReply(target('C0GENERAL', '1700000000.000200'));
    await other.append('Hello');
    const start = await fake.waitFor(() =>
      fake.callsTo('chat.startStream').find((call) => call.args.channel === 'C0GENERAL'),
    );
    expect(start.at - opened).toBeLessThan(1000);

    await other.finish('Hello there.');
    await edited.finish('Checking the deploy, still checking: done.');
    // The limited method waited out its Retry-After, then delivered.
    const updates = fake.callsTo('chat.update');
    expect((updates.at(-1)?.at ?? 0) - limitedAt).toBeGreaterThanOrEqual(1900);
    expect(fake.threadMessages('C0OPS', '1700000000.000100').map(shownText)).toEqual([
      'Checking the deploy, still checking: done.',
    ]);
  });

  it("spaces each stream's appends further apart the more replies stream at once", async () => {
    const slack = adapter();
    const replies = await Promise.all(
      ['1700000000.000300', '1700000000.000400'].map((ts) => slack.openReply(target('C0GENERAL', ts))),
    );
    const text = 'word '.repeat(60);
    for (let index = 0; index < 30; index++) {
      await Promise.all(replies.map((reply) => reply.append(text.slice(index * 10, index * 10 + 10))));
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    await Promise.all(replies.map((reply) => reply.finish(text)));

    // Two sharing Tier 4 (100 a minute): one append per 1.22 s each, not every 20 ms.
    for (const reply of replies) {
      const [ts] = reply.messageIds;
      const thread = fake.messages.get(`C0GENERAL:${ts}`)?.threadTs;
      const start = fake.callsTo('chat.startStream').find((call) => call.args.thread_ts === thread);
      const appends = fake.callsTo('chat.appendStream').filter((call) => call.args.ts === ts);
      expect(appends.length).toBeGreaterThan(0);
      const times = [start?.at ?? 0, ...appends.map((call) => call.at)];
      for (let index = 1; index < times.length; index++)
        expect((times[index] ?? 0) - (times[index - 1] ?? 0)).toBeGreaterThanOrEqual(1100);
      const message = fake.messages.get(`C0GENERAL:${ts}`);
      expect(message && shownText(message)).toBe(text);
    }
  });

  it('posts a reply once at the end when the stream budget is spent, and streams the rest', async () => {
    const slack = adapter();
    // chat.startStream is Tier 2: 20 a minute in the workspace.
    const streamed = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        slack.openReply(target(`C0TEAM${index}`, `1700000001.0000${10 + index}`)),
      ),
    );
    for (const reply of streamed) await reply.append('Looking');
    await fake.waitFor(() => fake.callsTo('chat.startStream').length === 20);

    const deferred = await slack.openReply(target('C0LATE', '1700000002.000100'));
    await deferred.append('Looking into it');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await deferred.append(', found it.');
    await deferred.finish('Looking into it, found it.');
    await Promise.all(streamed.map((reply) => reply.finish('Looking: done.')));

    expect(fake.callsTo('chat.startStream')).toHaveLength(20);
    const late = fake.calls.filter((call) => call.args.channel === 'C0LATE');
    expect(late.map((call) => call.method)).toEqual(['chat.postMessage']);
    expect(fake.threadMessages('C0LATE', '1700000002.000100').map(shownText)).toEqual([
      'Looking into it, found it.',
    ]);
    expect(deferred.messageIds).toHaveLength(1);
  });

  it('looks up at most 100 people a minute (users.info, Tier 4) and never waits for the budget', async () => {
    const api = createSlackApi({ token: 'xoxb-test', apiUrl: fake.url, logger: silentLogger });
    const people = Array.from({ length: 101 }, (_, index) => `U0P${String(index).padStart(3, '0')}`);
    for (const user of people) fake.users.set(user, { name: user.toLowerCase() });
    const answers = await Promise.allSettled(people.map((user) => api.userProfile(user)));
    expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(100);
    // The 101st is refused at once, not queued for a minute: the message keeps the id (prepare.ts).
    expect(answers.at(-1)).toMatchObject({ status: 'rejected', reason: { slackError: 'paced' } });
    expect(fake.callsTo('users.info')).toHaveLength(100);
  });
});
