import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { countTextTokens } from '../../../src/core/text/tokens.js';
import { compactions, messages } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  startFakeModelServer,
} from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

const threshold = 800;
let model: FakeModelServer;
let cheap: FakeModelServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

beforeAll(async () => {
  model = await startFakeModelServer();
  cheap = await startFakeModelServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'big-model',
      BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS: String(threshold),
      BUTLER_CONTEXT_COMPACTION_BASE_URL: cheap.baseUrl,
      BUTLER_CONTEXT_COMPACTION_MODEL: 'cheap-model',
    },
    config: { compaction: { retryAfterSeconds: 0, timeoutMs: 500 }, model: { maxRetries: 0 } },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await cheap.close();
});
beforeEach(() => {
  model.reset();
  cheap.reset();
});

/** A chatty turn of about 60 tokens each way, mentioning an id that must survive. */
const words = (turn: number) =>
  `Ticket INC-${1000 + turn}: ${'the deploy pipeline needs another look '.repeat(6)}`;

async function converse(address: ConversationAddress, turns: number) {
  for (let turn = 0; turn < turns; turn++) {
    await app.butler.service.accept(
      inboundMessage({ text: words(turn), address, user: { id: `talker${thread}` } }),
    );
    await app.settle();
  }
}

const promptTokens = (request: RecordedRequest) =>
  request.messages.reduce((sum, message) => sum + countTextTokens(String(message.content ?? '')) + 4, 0);

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'compaction', thread: `c${thread}` };
}

async function conversationId(address: ConversationAddress) {
  return (await app.butler.store.conversations.find(encodeConversationKey(address)))?.id ?? '';
}

describe(`compaction on ${databaseKind}`, () => {
  it('folds older messages into a summary with the dedicated model once the threshold is crossed', async () => {
    model.setFallback({ text: `Noted. ${'I will check the pipeline. '.repeat(5)}` });
    cheap.setFallback({ text: '- Facts: tickets INC-1000 to INC-1004 concern the deploy pipeline.' });
    const address = newAddress();
    await converse(address, 12);

    expect(cheap.requests.length).toBeGreaterThan(0);
    const compactionRequest = cheap.requests[0];
    expect(compactionRequest?.model).toBe('cheap-model');
    expect(String(compactionRequest?.messages[0]?.content)).toContain('every identifier');
    expect(String(compactionRequest?.messages[1]?.content)).toContain('INC-1000');
    expect(model.requests.every((request) => request.model === 'big-model')).toBe(true);

    const last = model.requests.at(-1);
    expect(last?.messages[1]).toMatchObject({ role: 'system' });
    expect(String(last?.messages[1]?.content)).toContain('INC-1000 to INC-1004');
    expect(JSON.stringify(last?.messages)).not.toContain('INC-1000:');

    const id = await conversationId(address);
    const records = await app.butler.database.db
      .select()
      .from(compactions)
      .where(eq(compactions.conversationId, id));
    expect(records.length).toBe(cheap.requests.length);
    expect(records[0]).toMatchObject({ model: 'cheap-model' });
    expect(records[0]?.tokensAfter).toBeLessThan(records[0]?.tokensBefore ?? 0);
    const rows = await app.butler.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(rows).toHaveLength(24);
    expect(rows.filter((row) => row.compacted).length).toBeGreaterThan(0);
    expect(
      (await app.butler.store.conversations.find(encodeConversationKey(address)))?.lastCompactedAt,
    ).toBeInstanceOf(Date);
  });

  it('keeps the prompt bounded over a long conversation', async () => {
    model.setFallback({ text: `Sure. ${'Here is more detail on that. '.repeat(6)}` });
    cheap.setFallback((request) => ({
      text: `- Facts: summary ${cheap.requests.length} of ${String(request.messages[1]?.content).length} chars`,
    }));
    await converse(newAddress(), 40);
    const sizes = model.requests.map(promptTokens);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(threshold * 1.15);
    expect(sizes.at(-1)).toBeLessThan(sizes.reduce((sum, size) => sum + size, 0) / 10);
  });

  it('never separates a tool call from its result', async () => {
    let step = 0;
    model.setFallback(() => {
      step += 1;
      return step % 2 === 1
        ? {
            toolCalls: [{ name: 'recall', arguments: JSON.stringify({ query: `INC ${step}` }) }],
            text: 'Checking my notes.',
          }
        : { text: `Nothing stored about that yet. ${'More context for the log. '.repeat(4)}` };
    });
    cheap.setFallback({ text: '- Facts: recalled several tickets.' });
    await converse(newAddress(), 12);
    expect(cheap.requests.length).toBeGreaterThan(0);
    for (const request of [...model.requests, ...cheap.requests]) {
      const seen = new Set<string>();
      for (const message of request.messages) {
        const calls = (message.tool_calls as Array<{ id: string }> | undefined) ?? [];
        for (const call of calls) seen.add(call.id);
        if (message.role === 'tool') expect(seen.has(String(message.tool_call_id))).toBe(true);
      }
    }
    for (const request of cheap.requests)
      expect(String(request.messages[1]?.content)).not.toMatch(/New messages:\n\[tool result/);
  });

  it('answers with a trimmed prompt when compaction fails, and compacts on a later turn', async () => {
    model.setFallback({ text: `Ok. ${'Still working on it. '.repeat(6)}` });
    cheap.setFallback({ status: 500 });
    const address = newAddress();
    await converse(address, 12);
    expect(cheap.requests.length).toBeGreaterThan(0);
    expect(
      platform.replies.filter(
        (reply) => reply.target.address.thread === address.thread && reply.finalText?.startsWith('Ok.'),
      ),
    ).toHaveLength(12);
    expect(Math.max(...model.requests.map(promptTokens))).toBeLessThanOrEqual(threshold * 1.15);
    const id = await conversationId(address);
    expect(
      await app.butler.database.db.select().from(compactions).where(eq(compactions.conversationId, id)),
    ).toHaveLength(0);

    cheap.setFallback({ text: '- Facts: the deploy pipeline tickets.' });
    await converse(address, 1);
    expect(
      await app.butler.database.db.select().from(compactions).where(eq(compactions.conversationId, id)),
    ).toHaveLength(1);
  });
});
