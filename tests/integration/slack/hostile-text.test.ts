import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { hostileCases, refuseInboxWrites } from '../../helpers/hostile-text.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { lastUserContent, startPlatformButler } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { appMention, asJson, envelope, postToSlack, signingSecret, team } from '../../unit/slack/payloads.js';
import { botUserId, freshTs } from './slack-butler.js';

/**
 * Hostile text through the running Butler at the default log level: it is answered and kept (cleaned),
 * never turned into a 500 loop, and no log line repeats it.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
const logs = captureLogs();
const cases = hostileCases('slack');

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startPlatformButler('slack', {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-hostile',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: fake.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      tools: [
        {
          name: 'read_report',
          description: 'Read the latest report of a service.',
          risk: 'low',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${tools.url}/report` },
        },
      ],
    },
    logLevel: 'info',
    logDestination: logs.stream,
  });
});
afterAll(async () => {
  await app?.close();
  await tools.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const url = () => `${app.url}/slack/events`;

async function conversationOf(threadTs: string) {
  const key = encodeConversationKey({
    platform: 'slack',
    workspace: team,
    channel: 'C0GENERAL',
    thread: threadTs,
  });
  const conversation = await app.butler.store.conversations.find(key);
  if (!conversation) throw new Error(`no conversation for ${threadTs}`);
  return { conversation, window: await app.butler.store.conversations.window(conversation.id) };
}

function replyIn(threadTs: string) {
  return fake.threadMessages('C0GENERAL', threadTs).filter((message) => message.ts !== threadTs);
}

describe(`hostile text on Slack (${databaseKind})`, () => {
  it.each(cases)('answers and keeps a mention carrying $name', async (hostile) => {
    model.enqueue({ text: 'Noted.' });
    const ts = freshTs();
    const response = await postToSlack(
      url(),
      asJson(envelope(appMention({ ts, text: `<@${botUserId}> ${hostile.text}` }))),
    );
    expect(response.status).toBe(200);
    await app.settle();

    expect(lastUserContent(model, 0)).toContain(hostile.cleaned);
    expect(replyIn(ts).map(shownText)).toEqual(['Noted.']);
    const { window } = await conversationOf(ts);
    expect(window.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(window[0]?.content).toBe(hostile.cleaned);
  });

  it('keeps a model reply with NUL and half an emoji, split across deltas, for the next turn', async () => {
    const highHalf = '\u{1F600}'.charAt(0);
    const lowHalf = '\u{1F600}'.charAt(1);
    model.enqueue({
      text: 'unused',
      chunks: [`Done slack-reply-7f3a\u0000 with ${highHalf}`, `${lowHalf} and a cut ${highHalf}`, ' end.'],
    });
    const ts = freshTs();
    await postToSlack(url(), asJson(envelope(appMention({ ts, text: `<@${botUserId}> go` }))));
    await app.settle();
    const cleaned = 'Done slack-reply-7f3a with \u{1F600} and a cut \ufffd end.';
    expect(replyIn(ts).map(shownText)).toEqual([cleaned]);

    model.enqueue({ text: 'Still here.' });
    await postToSlack(
      url(),
      asJson(envelope(appMention({ ts: freshTs(), threadTs: ts, text: `<@${botUserId}> again` }))),
    );
    await app.settle();
    const history = model.requests[1]?.messages ?? [];
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(history[2]?.content).toBe(cleaned);
    const { window } = await conversationOf(ts);
    expect(window.map((message) => message.content)).toContain(cleaned);
  });

  it('never lets a reply ping a channel or a person, or hide where a link goes', async () => {
    // What a prompt injection could make the model write; split across deltas as a stream would be.
    const pings = [
      '<!channel>',
      '<!here>',
      '<!everyone>',
      '<@U0BOSS>',
      '<https://evil.example|your invoice>',
      '@here',
    ];
    model.enqueue({
      text: 'unused',
      chunks: [
        'Heads up ',
        '<',
        '!channel> and <!he',
        're> <!everyone> <@U0BO',
        'SS> see <https://evil.example|your invoice> @',
        'here',
      ],
    });
    const ts = freshTs();
    await postToSlack(url(), asJson(envelope(appMention({ ts, text: `<@${botUserId}> summarise` }))));
    await app.settle();
    const sent = fake
      .callsTo('chat.startStream')
      .concat(
        fake.callsTo('chat.appendStream'),
        fake.callsTo('chat.stopStream'),
        fake.callsTo('chat.postMessage'),
      )
      .map((call) => JSON.stringify(call.args))
      .join('\n');
    for (const ping of pings) expect(sent).not.toContain(ping);
    expect(sent).not.toMatch(/<[!@#h]/);
    // Each is still there to read.
    const shown = replyIn(ts)
      .map(shownText)
      .join('')
      .replace(/[\u200b\u2060]/g, '');
    expect(shown).toBe(
      'Heads up <!channel> and <!here> <!everyone> <@U0BOSS> see <https://evil.example|your invoice> @here',
    );
  });

  it('cleans tool arguments and tool results, and the turn completes', async () => {
    tools.respond({ body: 'report slack-tool-7f3a\u0000: all green\u0007' });
    model.enqueue(
      { toolCalls: [{ id: 'report_1', name: 'read_report', arguments: '{"service":"api\\u0000\\ud83d"}' }] },
      { text: 'The report is green.' },
    );
    const ts = freshTs();
    await postToSlack(url(), asJson(envelope(appMention({ ts, text: `<@${botUserId}> report?` }))));
    await app.settle();

    expect(tools.requests.at(-1)?.body).toEqual({ service: 'api\ufffd' });
    const toolMessage = model.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toBe('report slack-tool-7f3a: all green');
    expect(replyIn(ts).map(shownText)).toEqual(['The report is green.']);
    const { window } = await conversationOf(ts);
    expect(window.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(window[2]?.content).toBe('report slack-tool-7f3a: all green');
  });

  it('answers 500 while the database refuses writes, logging no message text, then takes the retry', async () => {
    const [hostile] = cases;
    if (!hostile) throw new Error('no hostile case');
    const payload = asJson(
      envelope(appMention({ ts: freshTs(), text: `<@${botUserId}> ${hostile.text} outage` })),
    );
    const restore = await refuseInboxWrites(app);
    const refused = await postToSlack(url(), payload);
    await restore();
    expect(refused.status).toBe(500);
    const failure = JSON.stringify(logs.records().find((line) => line.msg?.includes('not accepted')));
    expect(failure).toMatch(/inbox insert/);
    expect(failure).toMatch(/P0001/);

    model.enqueue({ text: 'Back.' });
    const retried = await postToSlack(url(), payload, { headers: { 'x-slack-retry-num': '1' } });
    expect(retried.status).toBe(200);
    await app.settle();
    expect(lastUserContent(model, 0)).toContain(`${hostile.cleaned} outage`);
  });

  // Runs last: every case above has been logged by then.
  it('never writes message text, replies or tool output into the log at the default level', () => {
    const text = logs.text();
    expect(text).toContain('Slack message received');
    for (const marker of [...cases.map((hostile) => hostile.marker), 'slack-reply-7f3a', 'slack-tool-7f3a'])
      expect(text).not.toContain(marker);
  });
});
