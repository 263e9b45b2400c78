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
});
