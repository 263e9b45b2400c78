import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startPlatformButler } from '../../helpers/platform-butler.js';
import { appMention, asJson, envelope, postToSlack, signingSecret } from '../../unit/slack/payloads.js';
import { botUserId, freshTs } from './slack-butler.js';

/**
 * Many replies at once in one workspace, against a fake Slack that enforces the rate tiers as Slack does
 * (per method per workspace, 429 with Retry-After; platforms.md "Checked since").
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startPlatformButler('slack', {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-integration',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: fake.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    // Every mention gets its turn at once, as in a busy workspace.
    config: { worker: { concurrency: 32 } },
  });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});

const concurrentReplies = 30;
const paragraph = (index: number) => `Step ${index}: ${'check the service, then the logs. '.repeat(3)}\n\n`;
const longReply = Array.from({ length: 30 }, (_, index) => paragraph(index)).join('');

describe('Slack under load', () => {
  it('delivers 30 concurrent long replies whole within the tiers, each stream a reply with its recipient', async () => {
    fake.rateTiers = true;
    const pieces = longReply.match(/[\s\S]{1,100}/g) ?? [];
    model.setFallback({ text: longReply, chunks: pieces, chunkDelayMs: 50 });
    // Thirty people in ten channels (one person's burst would meet Butler's per-user limit instead).
    const threads = Array.from({ length: concurrentReplies }, (_, index) => ({
      channel: `C0TEAM${index % 10}`,
      ts: freshTs(),
      user: `U0PERSON${index}`,
    }));
    await Promise.all(
      threads.map(({ channel, ts, user }) =>
        postToSlack(
          `${app.url}/slack/events`,
          asJson(envelope(appMention({ channel, ts, user, text: `<@${botUserId}> walk me through it` }))),
        ),
      ),
    );
    await app.settle(40_000);

    expect(fake.rateLimited.map((call) => call.method)).toEqual([]);
    for (const { channel, ts } of threads) {
      const reply = fake.threadMessages(channel, ts).filter((message) => message.user === botUserId);
      expect(reply.map(shownText).join('')).toBe(longReply);
    }
    const starts = fake.callsTo('chat.startStream');
    expect(starts.length).toBeGreaterThan(0);
    for (const start of starts) {
      const thread = threads.find(({ ts }) => ts === start.args.thread_ts);
      expect(start.args).toMatchObject({ recipient_user_id: thread?.user, recipient_team_id: 'T0BUTLER' });
    }
  }, 60_000);

  it('in an agent workspace, answers every mention without waiting for a session status, inside Tier 3', async () => {
    fake.reset();
    fake.rateTiers = true;
    fake.agents.available = true;
    model.setFallback({ text: 'All green.', chunks: ['All ', 'green.'], chunkDelayMs: 20 });
    // More turns than agents.sessions.setStatus may take in a minute (Tier 3: 50).
    const threads = Array.from({ length: 60 }, (_, index) => ({
      channel: `C0RUSH${index % 20}`,
      ts: freshTs(),
      user: `U0RUSH${index}`,
    }));
    await Promise.all(
      threads.map(({ channel, ts, user }) =>
        postToSlack(
          `${app.url}/slack/events`,
          asJson(envelope(appMention({ channel, ts, user, text: `<@${botUserId}> status?` }))),
        ),
      ),
    );
    // Every turn ends, its reply whole, while statuses still wait for the budget: none waited for one.
    await app.settle(40_000, { cosmetic: false });
    for (const { channel, ts } of threads) {
      const reply = fake.threadMessages(channel, ts).filter((message) => message.user === botUserId);
      expect(reply.map(shownText).join('')).toBe('All green.');
    }
    const statusCalls = fake.callsTo('agents.sessions.setStatus');
    expect(statusCalls.length).toBeLessThan(threads.length);
    expect(fake.rateLimited.map((call) => call.method)).toEqual([]);
    // A session is only ever made by `processing`: a dropped one is not followed by a status for it.
    for (const session of fake.agents.sessions.values()) expect(session.statuses[0]).toBe('processing');
    // Streamed replies end their session with the stream's stop (its default `active`), not a call.
    const streamed = new Set(fake.callsTo('chat.startStream').map((call) => String(call.args.thread_ts)));
    const activeCalls = statusCalls.filter((call) => call.args.status === 'active');
    expect(activeCalls.filter((call) => streamed.has(String(call.args.thread_ts)))).toEqual([]);
  }, 60_000);
});
