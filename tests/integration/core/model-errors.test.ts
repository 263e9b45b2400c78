import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  type ReplyScript,
  startFakeModelServer,
} from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

let model: FakeModelServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;
/** One deadline over every attempt; generous enough that a loaded machine still fits two attempts in it. */
const modelTimeoutMs = 2_000;

beforeAll(async () => {
  model = await startFakeModelServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: { model: { timeoutMs: modelTimeoutMs, maxRetries: 1, maxSteps: 3 } },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});
beforeEach(() => model.reset());

/** Sends one message scripted with `replies`; returns what the user saw and what was stored. */
async function turn(...replies: ReplyScript[]) {
  thread += 1;
  const address: ConversationAddress = {
    platform: 'console',
    workspace: 'local',
    channel: 'errors',
    thread: `e${thread}`,
  };
  // Only this turn's requests get its replies and count: an abandoned attempt of an earlier test that reaches
  // the model late (a loaded machine) takes none of them.
  const text = `question ${address.thread}`;
  const mine = (request: RecordedRequest) => JSON.stringify(request.messages).includes(text);
  if (replies.length > 0) model.enqueueFor(mine, ...replies);
  await app.butler.service.accept(inboundMessage({ text, address, user: { id: `user${thread}` } }));
  await app.settle();
  const conversation = await app.butler.store.conversations.find(encodeConversationKey(address));
  const stored = await app.butler.store.conversations.window(conversation?.id ?? '');
  const reply = platform.replies.find((entry) => entry.target.address.thread === address.thread);
  const notice = platform.notices.find((entry) => entry.target.address.thread === address.thread);
  const requests = model.requests.filter(mine);
  return { address, conversation, stored, requests, shown: reply?.finalText ?? notice?.text ?? '' };
}

describe(`model failures on ${databaseKind}`, () => {
  it('tells the user when the model stays rate-limited until the deadline', async () => {
    const limited = { status: 429, headers: { 'retry-after': '0' } };
    model.setFallback(limited);
    const { shown, stored, requests } = await turn();
    expect(requests.length).toBeGreaterThan(1);
    expect(shown).toContain('rate-limited');
    expect(stored.map((message) => message.role)).toEqual(['user']);
  });

  it('tells the user about a server error', async () => {
    const { shown } = await turn({ status: 500 }, { status: 503 });
    expect(shown).toContain('model service had an error');
  });

  it('gives up on a model that does not answer in time: one deadline over every attempt', async () => {
    const started = Date.now();
    const { shown, stored, requests } = await turn({ hang: true }, { hang: true });
    expect(shown).toContain('took too long');
    // The configured deadline bound the whole call: no second attempt of another deadline.
    expect(requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2 * modelTimeoutMs);
    expect(stored.map((message) => message.role)).toEqual(['user']);
  });

  it('retries a server error when the server says when, within the deadline', async () => {
    const { shown, requests } = await turn(
      { status: 503, headers: { 'retry-after': '0' } },
      { text: 'Recovered.' },
    );
    expect(requests).toHaveLength(2);
    expect(shown).toBe('Recovered.');
  });

  it('keeps what was streamed and says the answer was cut off', async () => {
    const { shown, stored, conversation } = await turn({ streamThenFail: 'The first part of a long answer' });
    expect(shown).toMatch(/^The first part/);
    expect(shown).toContain('⚠️');
    expect(stored.map((message) => message.role)).toEqual(['user']);
    expect(conversation?.inflight).toBeNull();
  });

  it('feeds malformed tool-call arguments back to the model as a tool error', async () => {
    const { shown, stored, requests } = await turn(
      { toolCalls: [{ id: 'bad_json', name: 'remember', arguments: '{"content": "unterminated' }] },
      { text: 'Sorry, let me answer directly.' },
    );
    const toolMessage = requests[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: 'bad_json' });
    expect(String(toolMessage?.content)).toContain('not valid JSON');
    expect(shown).toBe('Sorry, let me answer directly.');
    expect(stored.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('feeds an unknown tool back to the model with the tools it has', async () => {
    const { requests } = await turn(
      { toolCalls: [{ id: 'ghost', name: 'launch_rocket', arguments: '{}' }] },
      { text: 'I cannot do that.' },
    );
    const toolMessage = requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).toMatch(/unknown tool "launch_rocket".*remember, recall, forget/);
  });

  it('stops a model that keeps calling tools after the step budget', async () => {
    model.setFallback({ toolCalls: [{ name: 'recall', arguments: '{"query":""}' }] });
    const { shown, stored, requests } = await turn();
    expect(requests).toHaveLength(3);
    expect(shown).toContain('I stopped after 3 steps');
    // Every stored tool call has its result: the history stays valid for the next turn.
    const callIds = stored.flatMap((message) =>
      message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : [],
    );
    const resultIds = stored.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : []));
    expect(resultIds).toEqual(callIds);
  });

  it('answers normally in the same conversation after a failure', async () => {
    const failed = await turn({ status: 400 });
    model.enqueue({ text: 'Back to normal.' });
    await app.butler.service.accept(
      inboundMessage({ text: 'again?', address: failed.address, user: { id: 'again' } }),
    );
    await app.settle();
    expect(platform.finalTexts().at(-1)).toBe('Back to normal.');
    const roles = model.requests.at(-1)?.messages.map((message) => message.role);
    expect(roles).toEqual(['system', 'user', 'user']);
  });
});

describe('without a model', () => {
  it('says how to configure one instead of staying silent', async () => {
    const silentPlatform = new RecordingAdapter();
    const bare = await startTestButler({ adapters: [silentPlatform] });
    try {
      await bare.butler.service.accept(inboundMessage({ text: 'hello?' }));
      await bare.settle();
      expect(silentPlatform.finalTexts()[0]).toContain('BUTLER_MODEL');
    } finally {
      await bare.close();
    }
  });
});
