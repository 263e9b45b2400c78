import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { appMention, asForm, asJson, envelope, postToSlack, team } from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

/** Feedback buttons under Butler's replies, clicked through Bolt against the fake Slack Web API. */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model);
  slackUrl = `${app.url}/slack/events`;
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

const alice = { id: 'U0ALICE', name: 'alice' };

/** Alice mentions Butler in #general; Butler answers in the thread. Returns the reply's ts and the thread's. */
async function askAndAnswer(): Promise<{ threadTs: string; replyTs: string }> {
  model.enqueue({ text: 'The deploy finished at 14:02.' });
  const threadTs = freshTs();
  await postToSlack(slackUrl, asJson(envelope(appMention({ ts: threadTs }))));
  await app.settle();
  const reply = [...fake.messages.values()].find(
    (message) => message.threadTs === threadTs && message.botId !== undefined,
  );
  if (!reply) throw new Error('Butler did not reply');
  return { threadTs, replyTs: reply.ts };
}

/** A click on a `feedback_buttons` element, shaped like Slack's block_actions payload. */
function feedbackClick(options: { messageTs: string; threadTs: string; rating: 'positive' | 'negative' }) {
  return {
    type: 'block_actions',
    user: { id: alice.id, username: alice.name, name: alice.name, team_id: team },
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: options.messageTs,
      channel_id: 'C0GENERAL',
      is_ephemeral: false,
      thread_ts: options.threadTs,
    },
    trigger_id: '1337.44.feedback',
    team: { id: team, domain: 'butler-test' },
    channel: { id: 'C0GENERAL', name: 'general' },
    message: { type: 'message', ts: options.messageTs, thread_ts: options.threadTs, text: 'reply' },
    response_url: 'https://hooks.slack.com/actions/T0BUTLER/2/def',
    actions: [
      {
        type: 'feedback_buttons',
        action_id: 'butler_feedback',
        block_id: 'feedback',
        value: options.rating,
        text: { type: 'plain_text', text: options.rating === 'positive' ? '👍' : '👎' },
        action_ts: `${Date.now() / 1000}`,
      },
    ],
  };
}

function commentSubmission(view: Record<string, unknown>, comment: string) {
  return {
    type: 'view_submission',
    team: { id: team, domain: 'butler-test' },
    user: { id: alice.id, username: alice.name, name: alice.name, team_id: team },
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    trigger_id: '1337.45.feedback',
    view: {
      id: 'V0COMMENT',
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      state: { values: { comment: { comment_input: { type: 'plain_text_input', value: comment } } } },
    },
    response_urls: [],
  };
}

const ratings = async () => (await app.butler.store.feedback.list({ limit: 10 })).items;

describe('Slack feedback', () => {
  it('puts feedback buttons under the reply; a click is stored and answered to the clicker alone', async () => {
    const { threadTs, replyTs } = await askAndAnswer();
    const stop = fake.callsTo('chat.stopStream').at(-1);
    expect(JSON.stringify(stop?.args.blocks)).toContain('"feedback_buttons"');

    const response = await postToSlack(
      slackUrl,
      asForm(feedbackClick({ messageTs: replyTs, threadTs, rating: 'positive' })),
    );
    expect(response.status).toBe(200);
    const [rating] = await ratings();
    expect(rating).toMatchObject({
      rating: 'positive',
      messageId: replyTs,
      rater: { platform: 'slack', id: 'U0ALICE', name: 'alice' },
      conversationKey: `slack:${team}:C0GENERAL:${threadTs}`,
    });
    await expect.poll(() => fake.callsTo('chat.postEphemeral').length).toBe(1);
    expect(fake.callsTo('chat.postEphemeral')[0]?.args).toMatchObject({
      user: 'U0ALICE',
      thread_ts: threadTs,
    });
    expect(fake.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('a 👎 changes the rating, opens the comment modal, and the comment is stored', async () => {
    const { threadTs, replyTs } = await askAndAnswer();
    await postToSlack(slackUrl, asForm(feedbackClick({ messageTs: replyTs, threadTs, rating: 'positive' })));
    await postToSlack(slackUrl, asForm(feedbackClick({ messageTs: replyTs, threadTs, rating: 'negative' })));
    const mine = (await ratings()).filter((item) => item.messageId === replyTs);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.rating).toBe('negative');

    await expect.poll(() => fake.callsTo('views.open').length).toBe(1);
    const open = fake.callsTo('views.open')[0]?.args;
    expect(open?.trigger_id).toBe('1337.44.feedback');
    const view = open?.view as Record<string, unknown>;
    await postToSlack(slackUrl, asForm(commentSubmission(view, 'It was 14:20, not 14:02.')));
    const [commented] = (await ratings()).filter((item) => item.messageId === replyTs);
    expect(commented).toMatchObject({ rating: 'negative', comment: 'It was 14:20, not 14:02.' });
    // Each click and the comment were answered to Alice alone.
    await expect.poll(() => fake.callsTo('chat.postEphemeral').length).toBe(3);
    expect(String(fake.callsTo('chat.postEphemeral')[2]?.args.text)).toContain('comment');
  });

  it('stops the stream without the buttons when Slack refuses them', async () => {
    fake.failNext('chat.stopStream', { error: 'invalid_blocks' });
    const { replyTs } = await askAndAnswer();
    const stops = fake.callsTo('chat.stopStream');
    expect(stops).toHaveLength(2);
    expect(stops[1]?.args.blocks).toBeUndefined();
    expect([...fake.messages.values()].find((message) => message.ts === replyTs)?.streaming).toBe(false);
  });

  it('a click on a message that is not a Butler reply stores nothing', async () => {
    const before = (await ratings()).length;
    // Not `freshTs()`: within one second it can equal the ts the fake gave an earlier test's reply
    // (a thread's reply is its ts plus a microsecond), and that one is a Butler reply.
    const threadTs = '1600000000.000100';
    await postToSlack(slackUrl, asForm(feedbackClick({ messageTs: threadTs, threadTs, rating: 'positive' })));
    await expect.poll(() => fake.callsTo('chat.postEphemeral').length).toBe(1);
    expect(String(fake.callsTo('chat.postEphemeral')[0]?.args.text)).toContain('not a Butler reply');
    expect(await ratings()).toHaveLength(before);
  });
});
