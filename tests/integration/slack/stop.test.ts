import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { waitFor } from '../../helpers/wait-for.js';
import { appMention, asJson, envelope, postToSlack, userMessage } from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

/** Stopping an answer in Slack: the agent session's stop button (`agent_session_stopped`), or "stop" in the thread. */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model);
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
  fake.users.set('U0BOB', { name: 'bob', displayName: 'Bob' });
});

const send = (event: Record<string, unknown>) =>
  postToSlack(`${app.url}/slack/events`, asJson(envelope(event)));

/** A mention whose answer streams for seconds; resolves once the reply has started. */
async function slowAnswer(): Promise<string> {
  model.enqueue({
    text: 'x',
    chunks: Array.from({ length: 200 }, (_, index) => `step${index} `),
    chunkDelayMs: 50,
  });
  const ts = freshTs();
  await send(appMention({ ts, text: `<@${botUserId}> walk me through everything` }));
  await waitFor(() => fake.callsTo('chat.appendStream').length >= 2 || undefined, 10_000);
  return ts;
}

const finalReply = (ts: string) =>
  fake
    .threadMessages('C0GENERAL', ts)
    .filter((message) => message.user === botUserId && message.ts !== ts)
    .map((message) => shownText(message))
    .join('\n');

describe('stopping an answer in Slack', () => {
  it("stops the turn when the agent session's stop button is pressed", async () => {
    const ts = await slowAnswer();
    const asked = Date.now();
    const response = await send({
      type: 'agent_session_stopped',
      channel: 'C0GENERAL',
      thread_ts: ts,
      streaming_message_ts: [],
      user: 'U0BOB',
      event_ts: freshTs(),
    });
    expect(response.status).toBe(200);
    await app.settle();
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(finalReply(ts)).toMatch(/^step0 step1 [\s\S]*_Stopped by Bob\._$/);
    expect(finalReply(ts)).not.toContain('step199');
    expect(model.requests).toHaveLength(1);
  });

  it('stops it when someone writes "stop" in the thread', async () => {
    const ts = await slowAnswer();
    // Slack puts the sender's profile on a person's message: the mark names them.
    const profile = { user_profile: { display_name: 'Bob', real_name: 'Bob Builder' } };
    await send(userMessage({ ts: freshTs(), threadTs: ts, user: 'U0BOB', text: 'stop', extra: profile }));
    await app.settle();
    expect(finalReply(ts)).toMatch(/_Stopped by Bob\._$/);
    expect(model.requests).toHaveLength(1);
  });
});
