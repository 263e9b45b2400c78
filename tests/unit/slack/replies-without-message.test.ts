import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import { createCapabilities, defaultReplyTuning } from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { botId, botUserId, team } from './payloads.js';

/**
 * A scheduled run answers no message: its target has no `replyTo`. In an agent workspace (sessions and assistant
 * status on), the adapter still makes no call that needs a message or thread it does not have.
 */

let fake: FakeSlackApi;
let slack: ChatAdapter;

beforeEach(async () => {
  fake = await startFakeSlackApi();
  fake.agents.available = true;
  const api = createSlackApi({ token: 'xoxb-test', apiUrl: fake.url, logger: silentLogger, retries: 0 });
  slack = createSlackAdapter({
    api,
    logger: silentLogger,
    capabilities: createCapabilities(),
    tuning: { ...defaultReplyTuning, updateIntervalMs: 50, streamIntervalMs: 50 },
    identity: () => ({ userId: botUserId, botId, teamId: team }),
  });
});
afterEach(async () => {
  await fake.close();
});

const dmTop: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'D0ALICE', thread: 'main' },
  userId: 'U0ALICE',
};
const channelThread: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: '1700000000.000100' },
  userId: 'U0ALICE',
};
const start = { requester: { id: 'U0ALICE' }, text: 'Remind me to stretch', firstTurn: false };

describe('Slack with no message to answer', () => {
  it("in a DM's top level: no session, status or reaction, and the reply is posted, not streamed", async () => {
    await slack.turnStarted?.(dmTop, start);
    const clear = await slack.showWorking(dmTop);
    await slack.showProgress?.(dmTop, 'is asking ops…');
    const reply = await slack.openReply(dmTop);
    await reply.append('Time to ');
    await reply.finish('Time to stretch.');
    await clear();
    await slack.turnEnded?.(dmTop, 'replied');
    await slack.postNotice(dmTop, 'Paused after 3 failures.');
    // Posted, then updated to the final text with its feedback buttons; the notice goes top-level too.
    expect(fake.calls.map((call) => call.method)).toEqual([
      'chat.postMessage',
      'chat.update',
      'chat.postMessage',
    ]);
    expect(fake.callsTo('chat.postMessage').map((call) => call.args.thread_ts)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('in a channel thread: the session is the thread, the reply streams there, and nothing reacts', async () => {
    await slack.turnStarted?.(channelThread, start);
    const clear = await slack.showWorking(channelThread);
    const reply = await slack.openReply(channelThread);
    await reply.finish('The deploy went out.');
    await clear();
    await slack.turnEnded?.(channelThread, 'replied');
    expect(fake.agents.statusesOf('C0GENERAL', '1700000000.000100')).toEqual(['processing', 'active']);
    expect(fake.callsTo('chat.startStream')[0]?.args).toMatchObject({ thread_ts: '1700000000.000100' });
    expect(fake.callsTo('reactions.add')).toEqual([]);
  });
});
