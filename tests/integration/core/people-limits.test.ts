import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatUser, ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

/**
 * A person is one person for every limit (issue 40, "people, all the way"): each person here writes in the
 * terminal as themselves and through an API key of theirs, and is let in by the allowlist as themselves, counts
 * once toward the rate limit (two messages a minute), reads their own memories and pays from their own budget,
 * whichever identity they write from. Each test has a person of its own, so their messages never share a minute.
 */

let model: FakeModelServer;
let app: TestButler;
let thread = 0;

/** A person's terminal identity, and how their API key writes into the terminal's conversations. */
const person = (name: string): [ChatUser, ChatUser] => [
  { id: name, name },
  { id: `${name}-key`, name: `${name}-key`, platform: 'api' },
];
const [, anaKey] = person('ana');
const [mia, miaKey] = person('mia');
const [rita, ritaKey] = person('rita');
const [bea, beaKey] = person('bea');
const everyone = ['ana', 'mia', 'rita', 'bea'];
/** A key nobody listed: it is not anyone the terminal's allowlist lets in. */
const bobKey: ChatUser = { id: 'bob-key', name: 'bob-key', platform: 'api' };

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `people-${thread}` };
}

const say = (user: ChatUser, text: string, address = newAddress()) =>
  app.butler.service.accept(inboundMessage({ text, address, user, isDirect: false }));

const requestsFor = (text: string) =>
  model.requests.filter((request) => JSON.stringify(request.messages).includes(text));

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      people: everyone.map((name) => ({ name, console: name, api: `${name}-key` })),
      access: { console: { users: [...everyone, 'pat'] } },
      api: {
        keys: everyone.map((name) => ({
          name: `${name}-key`,
          key: `${name}-key-0123456789abcdef`,
          scopes: ['chat'],
        })),
      },
      rateLimit: { messagesPerMinute: 2 },
      budgets: [{ scope: 'user', platform: 'console', id: bea.id, tokensPerDay: 500, onExceeded: 'stop' }],
    },
    adapters: [new RecordingAdapter()],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});
beforeEach(() => {
  model.reset();
  model.setFallback({ text: 'Done.' });
});

describe(`one person, every limit (${databaseKind})`, () => {
  it('lets a person in by who they are, whichever identity writes', async () => {
    expect(await say(anaKey, 'from my key')).toMatchObject({ status: 'accepted' });
    expect(await say(bobKey, 'from a stranger key')).toMatchObject({
      status: 'ignored',
      reason: 'not_allowed',
    });
    await app.settle();
    expect(requestsFor('from a stranger key')).toEqual([]);
  });

  it("reads a person's memories whichever identity told them", async () => {
    model.enqueue(
      {
        toolCalls: [{ id: 'call_remember', name: 'remember', arguments: '{"content":"Prefers green tea"}' }],
      },
      { text: 'Noted.' },
    );
    await say(mia, 'remember that I prefer green tea');
    await app.settle();
    model.reset();
    await say(miaKey, 'what do I drink?');
    await app.settle();
    const [request] = requestsFor('what do I drink?');
    expect(JSON.stringify(request?.messages[0])).toContain('Prefers green tea');
  });

  it("counts every identity's messages toward one rate limit", async () => {
    await say(rita, 'rate one');
    await say(ritaKey, 'rate two');
    await say(ritaKey, 'rate three');
    await app.settle();
    expect(requestsFor('rate one')).toHaveLength(1);
    expect(requestsFor('rate two')).toHaveLength(1);
    expect(requestsFor('rate three')).toEqual([]);
  });

  it("charges what a person's key spends to that person's budget", async () => {
    model.enqueue({ text: 'Expensive.', usage: { promptTokens: 500, completionTokens: 100 } });
    await say(beaKey, 'spend through my key');
    await app.settle();
    model.reset();
    await say(bea, 'anything left?');
    await app.settle();
    expect(requestsFor('anything left?')).toEqual([]);
  });
});
