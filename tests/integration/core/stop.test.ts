import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { auditLog } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind, testDatabaseUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';

let model: FakeModelServer;
let tools: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

const olga = { id: 'olga', name: 'Olga' };

const tool = (name: string) => ({
  name,
  description: `The ${name} tool.`,
  risk: 'low',
  input: { type: 'object', properties: {} },
  http: { method: 'POST', url: `${tools.url}/${name}`, timeoutMs: 30_000 },
});

const options = () => ({
  env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
  config: { tools: [tool('slow_report'), tool('send_report')] },
  adapters: [platform],
});

beforeAll(async () => {
  model = await startFakeModelServer();
  tools = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler(options());
});
afterAll(async () => {
  await app.close();
  await model.close();
  await tools.close();
});
beforeEach(() => {
  model.reset();
  tools.requests.length = 0;
});

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `s${thread}` };
}

const ask = (address: ConversationAddress, text = 'write me a long answer') =>
  app.butler.service.accept(
    inboundMessage({ text, address, isDirect: false, user: { id: 'ana', name: 'Ana' } }),
  );

const replyIn = (address: ConversationAddress) =>
  platform.replies.filter((entry) => entry.target.address.thread === address.thread);

describe(`stopping a turn (${databaseKind})`, () => {
  it('stops a streaming reply at once; the reply keeps what was written, marked, and the next message is answered', async () => {
    const address = newAddress();
    model.enqueue({
      text: 'x',
      chunks: Array.from({ length: 200 }, (_, index) => `word${index} `),
      chunkDelayMs: 50,
    });
    await ask(address);
    await waitFor(() => (replyIn(address)[0]?.deltas.length ?? 0) >= 3, 10_000);
    const asked = Date.now();
    expect(await app.butler.service.stop({ address, user: olga })).toBe('stopping');
    await waitFor(() => replyIn(address)[0]?.finalText, 5_000);
    // Long before the stream's own end (10 s), with room for a loaded machine.
    expect(Date.now() - asked).toBeLessThan(3_000);
    const shown = replyIn(address)[0]?.finalText ?? '';
    expect(shown).toMatch(/^word0 word1 word2 [\s\S]*\n\n_Stopped by Olga\._$/);
    expect(shown).not.toContain('word199');
    await app.settle();

    const conversation = await app.butler.store.conversations.find(encodeConversationKey(address));
    const stored = await app.butler.store.conversations.window(conversation?.id ?? '');
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: shown });
    const [audit] = await app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.conversationKey, encodeConversationKey(address)));
    expect(audit).toMatchObject({ toolName: 'stop', risk: 'low', decidedBy: 'olga', outcome: 'not_run' });

    model.enqueue({ text: 'Short answer this time.' });
    await ask(address, 'shorter please');
    await app.settle();
    expect(replyIn(address).at(-1)?.finalText).toBe('Short answer this time.');
  });

  it('aborts a running tool and never starts the calls after it', async () => {
    const address = newAddress();
    tools.respond({ delayMs: 20_000, body: '{"done":true}' }, '/slow_report');
    model.enqueue({
      toolCalls: [
        { id: 'call_slow', name: 'slow_report', arguments: '{}' },
        { id: 'call_send', name: 'send_report', arguments: '{}' },
      ],
    });
    await ask(address);
    await waitFor(() => tools.requests.some((request) => request.path === '/slow_report'), 10_000);
    const asked = Date.now();
    expect(await app.butler.service.stop({ address, user: olga })).toBe('stopping');
    await app.settle(10_000);
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(tools.requests.map((request) => request.path)).toEqual(['/slow_report']);
    expect(replyIn(address).at(-1)?.finalText).toBe('_Stopped by Olga._');
    // The model was not asked again after the stop.
    expect(model.requests).toHaveLength(1);
    const rows = await app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.conversationKey, encodeConversationKey(address)));
    expect(rows.map((row) => [row.toolName, row.outcome])).toEqual(
      expect.arrayContaining([
        ['slow_report', 'failed'],
        ['send_report', 'not_run'],
        ['stop', 'not_run'],
      ]),
    );
  });

  it('takes "stop" written in the thread as a stop, and as a message when nothing runs', async () => {
    const address = newAddress();
    model.enqueue({ text: 'x', chunks: Array.from({ length: 100 }, () => 'more '), chunkDelayMs: 50 });
    await ask(address);
    await waitFor(() => (replyIn(address)[0]?.deltas.length ?? 0) >= 2, 10_000);
    const stopMessage = inboundMessage({ text: 'Stop!', address, isDirect: false, user: olga });
    expect(await app.butler.service.accept(stopMessage)).toEqual({ status: 'stopping' });
    await app.settle();
    expect(replyIn(address)[0]?.finalText).toMatch(/_Stopped by Olga\._$/);
    expect(model.requests).toHaveLength(1);

    expect(await app.butler.service.stop({ address, user: olga })).toBe('idle');
    model.enqueue({ text: 'Nothing is running.' });
    const idle = await app.butler.service.accept(
      inboundMessage({ text: 'stop', address, isDirect: false, user: olga }),
    );
    expect(idle.status).toBe('accepted');
    await app.settle();
    expect(replyIn(address).at(-1)?.finalText).toBe('Nothing is running.');
  });
});

describe.runIf(testDatabaseUrl)('stopping a turn another process runs (postgres)', () => {
  it('stops it from the process that did not claim it', async () => {
    // A second Butler on the same database that serves no platform of its own: it only takes the stop.
    const other = await startTestButler({
      env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
      ...(app.databaseUrl ? { databaseUrl: app.databaseUrl } : {}),
    });
    try {
      const address = newAddress();
      model.enqueue({ text: 'x', chunks: Array.from({ length: 200 }, () => 'slow '), chunkDelayMs: 50 });
      await ask(address);
      await waitFor(() => (replyIn(address)[0]?.deltas.length ?? 0) >= 2, 10_000);
      const asked = Date.now();
      expect(await other.butler.service.stop({ address, user: olga })).toBe('stopping');
      await waitFor(() => replyIn(address)[0]?.finalText, 5_000);
      // Long before the stream's own end (10 s), with room for a loaded machine.
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(replyIn(address)[0]?.finalText).toMatch(/_Stopped by Olga\._$/);
    } finally {
      await other.stop();
    }
  });
});
