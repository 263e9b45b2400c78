import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import { createCapabilities, defaultReplyTuning } from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/adapter.js';
import { silentLogger } from '../../../src/core/logger.js';
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
});
