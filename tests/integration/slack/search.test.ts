import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { appMention, asJson, envelope, postToSlack, userMessage } from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

/**
 * search_messages over the real Bolt path, against a stand-in for Slack's `assistant.search.context` that
 * answers only what the action token's person may read: the asker's own token and no other, the audience
 * filter (public channel, DM, private channel with a C id, Slack Connect), and nothing of the results kept.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;

const secretKey = Buffer.alloc(32, 7).toString('base64');

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model, undefined, { env: { BUTLER_SECRET_KEY: secretKey } });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});

const inSearch = (ts: string) => String(Number(ts.split('.')[0]) - 3600);

beforeEach(() => {
  fake.reset();
  model.reset();
  const { search } = fake;
  search.addConversation({ id: 'C0GENERAL', name: 'general', kind: 'public', members: [] });
  search.addConversation({ id: 'C0PAYMENTS', name: 'payments', kind: 'public', members: [] });
  search.addConversation({
    id: 'C0SECRET',
    name: 'incident-room',
    kind: 'private',
    members: ['U0ALICE', 'U0BOB'],
    botMember: true,
  });
  search.addConversation({
    id: 'C0LEADS',
    name: 'leads',
    kind: 'private',
    members: ['U0ALICE'],
    botMember: false,
  });
  search.addConversation({ id: 'D0ALICE', name: 'alice', kind: 'im', members: ['U0ALICE'], botMember: true });
  search.addConversation({
    id: 'C0PARTNER',
    name: 'partner-shared',
    kind: 'public',
    members: ['U0ALICE'],
    externalShared: true,
  });
  const at = `${inSearch(freshTs())}.000100`;
  search.addMessage({
    channel: 'C0PAYMENTS',
    ts: at,
    user: 'U0CAROL',
    userName: 'carol',
    text: 'Rollback plan: revert payments to v41 first',
  });
  search.addMessage({
    channel: 'C0LEADS',
    ts: `${at.split('.')[0]}.000200`,
    user: 'U0ALICE',
    userName: 'alice',
    text: 'Rollback budget is secret: 40k',
  });
  search.addMessage({
    channel: 'C0SECRET',
    ts: `${at.split('.')[0]}.000300`,
    user: 'U0BOB',
    userName: 'bob',
    text: 'Rollback drill failed twice',
  });
});

const publicText = 'revert payments to v41';
const leadsText = 'Rollback budget is secret';
const secretRoomText = 'Rollback drill failed';

/** The model searches for "rollback", then answers from what it got. */
function searchThenAnswer(answer = 'Here is what the team said.') {
  model.enqueue(
    { toolCalls: [{ id: 'call_search', name: 'search_messages', arguments: '{"query":"rollback"}' }] },
    { text: answer },
  );
}

/** What the model read back from the search (the tool message of its second request). */
function toolResult(): string {
  const request = model.requests.find((entry) => entry.messages.some((message) => message.role === 'tool'));
  const message = request?.messages.find((entry) => entry.role === 'tool');
  return String(message?.content ?? '');
}

async function mention(options: { channel?: string; token?: string; user?: string; threadTs?: string }) {
  const ts = freshTs();
  const event = {
    ...appMention({
      ts,
      channel: options.channel ?? 'C0GENERAL',
      ...(options.user ? { user: options.user } : {}),
      ...(options.threadTs ? { threadTs: options.threadTs } : {}),
      text: `<@${botUserId}> what did we decide about the rollback?`,
    }),
    ...(options.token ? { action_token: options.token } : {}),
  };
  const response = await postToSlack(`${app.url}/slack/events`, asJson(envelope(event)));
  expect(response.status).toBe(200);
  return ts;
}

async function replied(channel: string, threadTs: string, text: string) {
  await fake.waitFor(
    () =>
      fake
        .threadMessages(channel, threadTs)
        .some((message) => message.user === botUserId && shownText(message).includes(text)),
    10_000,
  );
}

describe(`search_messages on Slack (${databaseKind})`, () => {
  it("searches with the bot token and the asker's own action token, and withholds private results in a public channel", async () => {
    const token = fake.search.issueToken('U0ALICE');
    searchThenAnswer();
    const ts = await mention({ token });
    await replied('C0GENERAL', ts, 'Here is what the team said.');

    expect(fake.search.requests).toHaveLength(1);
    expect(String(model.requests[0]?.messages[0]?.content)).toContain('Cite the link of every message');
    const [request] = fake.search.requests;
    expect(request?.token).toBe('xoxb-integration');
    expect(request?.args.action_token).toBe(token);
    expect(request?.args.query).toBe('rollback');
    const result = toolResult();
    expect(result).toContain(publicText);
    expect(result).toContain('<search_results>');
    expect(result).not.toContain(leadsText);
    expect(result).not.toContain(secretRoomText);
    expect(result).toContain('2 results from private conversations are not shown here');

    // Nothing of any result, and not the token, in the database: only what was searched and the links.
    const dump = await dumpDatabase(app);
    for (const text of [publicText, leadsText, secretRoomText, token]) expect(dump).not.toContain(text);
    expect(dump).toContain('search_messages for');
    expect(dump).toContain('https://fake.slack.com/archives/C0PAYMENTS/');
  });

  it('a second person in the thread searches with their own token, never the first one’s', async () => {
    const alices = fake.search.issueToken('U0ALICE');
    const bobs = fake.search.issueToken('U0BOB');
    searchThenAnswer('First answer.');
    const threadTs = await mention({ token: alices });
    await replied('C0GENERAL', threadTs, 'First answer.');

    searchThenAnswer('Second answer.');
    const ts = freshTs();
    const event = {
      ...userMessage({ ts, threadTs, user: 'U0BOB', text: 'and what did the drill show?' }),
      action_token: bobs,
    };
    await postToSlack(`${app.url}/slack/events`, asJson(envelope(event)));
    await replied('C0GENERAL', threadTs, 'Second answer.');

    expect(fake.search.requests.map((request) => request.args.action_token)).toEqual([alices, bobs]);
  });

  it('without a token there is no search: the person is asked to ask again', async () => {
    searchThenAnswer('Please ask me again.');
    const ts = await mention({});
    await replied('C0GENERAL', ts, 'Please ask me again.');
    expect(fake.search.requests).toHaveLength(0);
    expect(toolResult()).toContain('Ask again in a new message');
  });

  it('an expired token is refused once and never replaced by another', async () => {
    const stale = fake.search.issueToken('U0ALICE');
    fake.search.issueToken('U0ALICE');
    fake.search.expireToken(stale);
    searchThenAnswer('Please ask me again.');
    const ts = await mention({ token: stale });
    await replied('C0GENERAL', ts, 'Please ask me again.');
    expect(fake.search.requests.map((request) => request.args.action_token)).toEqual([stale]);
    expect(toolResult()).toContain('Ask again in a new message');
  });

  it('shows everything the asker may read in their DM with Butler', async () => {
    const token = fake.search.issueToken('U0ALICE');
    searchThenAnswer('From your DM.');
    const ts = freshTs();
    const event = {
      ...userMessage({ ts, channel: 'D0ALICE', channelType: 'im', text: 'what about the rollback?' }),
      action_token: token,
    };
    await postToSlack(`${app.url}/slack/events`, asJson(envelope(event)));
    await fake.waitFor(() => model.requests.length >= 2, 10_000);
    await fake.waitFor(
      () =>
        [...fake.messages.values()].some(
          (message) => message.channel === 'D0ALICE' && message.user === botUserId,
        ),
      10_000,
    );
    const result = toolResult();
    for (const text of [publicText, leadsText, secretRoomText]) expect(result).toContain(text);
    expect(result).not.toContain('not shown here');
  });

  it('in a private channel with a C id: its own results and public ones, not another private channel’s', async () => {
    const token = fake.search.issueToken('U0ALICE');
    searchThenAnswer('From the incident room.');
    const ts = await mention({ channel: 'C0SECRET', token });
    await replied('C0SECRET', ts, 'From the incident room.');
    const result = toolResult();
    expect(result).toContain(secretRoomText);
    expect(result).toContain(publicText);
    expect(result).not.toContain(leadsText);
    expect(result).toContain('1 result from private conversations is not shown here');
  });

  it('in a Slack Connect channel: only results from that channel', async () => {
    const token = fake.search.issueToken('U0ALICE');
    searchThenAnswer('Nothing to share here.');
    const ts = await mention({ channel: 'C0PARTNER', token });
    await replied('C0PARTNER', ts, 'Nothing to share here.');
    const result = toolResult();
    for (const text of [publicText, leadsText, secretRoomText]) expect(result).not.toContain(text);
    expect(result).toContain('3 results from private conversations are not shown here');
  });

  it('asks Slack for public channels only with slack.search.private off, and still filters what comes back', async () => {
    const other = await startSlackButler(fake, model, undefined, {
      env: { BUTLER_SECRET_KEY: secretKey },
      config: { slack: { search: { private: false } } },
    });
    try {
      fake.search.ignoreChannelTypes = true;
      const token = fake.search.issueToken('U0ALICE');
      searchThenAnswer('Public only.');
      const ts = freshTs();
      const event = {
        ...appMention({ ts, text: `<@${botUserId}> rollback?` }),
        action_token: token,
      };
      await postToSlack(`${other.url}/slack/events`, asJson(envelope(event)));
      await replied('C0GENERAL', ts, 'Public only.');
      expect(fake.search.requests[0]?.args.channel_types).toBe('public_channel');
      expect(toolResult()).not.toContain(leadsText);
    } finally {
      await other.close();
    }
  });

  it('never takes a refused action token for a refused bot token (an installation stays served)', async () => {
    const refused: string[] = [];
    const api = createSlackApi({
      token: 'xoxb-integration',
      apiUrl: fake.url,
      logger: silentLogger,
      onTokenRefused: (error) => refused.push(error),
    });
    const token = fake.search.issueToken('U0ALICE');
    fake.failNext('assistant.search.context', { error: 'token_expired' });
    await expect(
      api.callNow('assistant.search.context', { query: 'rollback', action_token: token }),
    ).rejects.toThrow(/token_expired/);
    expect(refused).toEqual([]);
    // The bot token's own refusal still counts.
    fake.failNext('conversations.info', { error: 'token_revoked' });
    await expect(api.callNow('conversations.info', { channel: 'C0GENERAL' })).rejects.toThrow(
      /token_revoked/,
    );
    expect(refused).toEqual(['token_revoked']);
  });
});
