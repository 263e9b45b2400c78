import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, inputWaits } from '../../../src/storage/schema.js';
import {
  questionApi,
  questionEnv,
  questionKeys,
  questionKeysConfig,
  toolResultOf,
} from '../../helpers/api-questions.js';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import {
  start2025QuestionsHttpServer,
  stdio2025QuestionsTransport,
} from '../../helpers/mcp-2025-questions-server.js';
import { readCallLog } from '../../helpers/mcp-test-server.js';
import { readEvents, type SseEvent } from '../../helpers/sse-client.js';

/**
 * A 2025-11-25 MCP server asks over its session in the middle of a call (`elicitation/create`), over Streamable
 * HTTP and stdio. The call stays open while the person who asked answers (over the HTTP API here, the same form
 * and checks as a 2026 question); its deadline waits with it. A restart before the answer lapses the question:
 * the person is told, the audit says cancel, and a late answer changes nothing.
 */

const keys = questionKeys;
let model: FakeModelServer;
let shop: Awaited<ReturnType<typeof start2025QuestionsHttpServer>>;
let app: TestButler;
const home = mkdtempSync(join(tmpdir(), 'butler-elicitation-2025-'));
const deskLog = join(home, 'desk-calls.jsonl');

function options(databaseUrl?: string): TestButlerOptions {
  const desk = stdio2025QuestionsTransport(deskLog);
  if (desk.kind !== 'stdio') throw new Error('expected stdio');
  return {
    dataDir: join(home, 'data'),
    ...(databaseUrl ? { databaseUrl } : {}),
    env: questionEnv(model),
    config: {
      mcpServers: [
        // A call's own deadline is short: the person's answer takes longer, which must not time the call out.
        { name: 'shop', url: shop.url, timeoutMs: 1_500, tools: { risk: { ship: 'low' } } },
        {
          name: 'desk',
          command: desk.command,
          args: desk.args,
          env: desk.env,
          ...(desk.cwd ? { cwd: desk.cwd } : {}),
          connectTimeoutMs: 15_000,
          timeoutMs: 1_500,
          tools: { risk: { ship: 'low' } },
        },
      ],
      api: questionKeysConfig.api,
    },
  };
}

beforeAll(async () => {
  model = await startFakeModelServer();
  shop = await start2025QuestionsHttpServer();
  app = await startTestButler(options());
}, 60_000);
afterAll(async () => {
  await app.close();
  await shop.close();
  await model.close();
});

const { api, answer } = questionApi(() => app.url);

const asked = (event: SseEvent) => event.data.type === 'input_required';

/**
 * Asks Butler to call `server`'s `tool`, with `then` as the model's reply after it (none: enqueued later); returns
 * the stream's events up to the question (the turn runs on: the call is open, waiting), or to the end when nothing
 * is asked.
 */
async function ask(conversation: string, server: string, tool: string, args: object, then?: string) {
  model.enqueue({
    toolCalls: [{ id: `call_${conversation}`, name: `${server}__${tool}`, arguments: JSON.stringify(args) }],
  });
  if (then) model.enqueue({ text: then });
  const response = await api(`/conversations/${conversation}/messages`, {
    method: 'POST',
    body: JSON.stringify({ text: `please ${tool}` }),
  });
  return readEvents(response, asked);
}

async function question(conversation: string, server = 'shop', then: string | null = 'Done.') {
  const events = await ask(conversation, server, 'ship', { item: 'mug' }, then ?? undefined);
  const last = events.at(-1)?.data;
  expect(last).toMatchObject({ type: 'input_required', server, tool: `${server}__ship` });
  return last as { inputId: string; requests: Array<Record<string, unknown>> };
}

/** The tool result the model was given for the call of `conversation`. */
const resultOf = (conversation: string) => toolResultOf(model, `call_${conversation}`);

const audited = (toolCallId: string) =>
  app.butler.database.db
    .select({ actor: auditLog.actor, arguments: auditLog.arguments })
    .from(auditLog)
    .where(and(eq(auditLog.toolCallId, toolCallId), eq(auditLog.decision, 'answered')));

const replayOf = async (conversation: string) =>
  JSON.stringify(await readEvents(await api(`/conversations/${conversation}/events?after=0&follow=false`)));

const waitRow = async (id: string) =>
  (await app.butler.database.db.select().from(inputWaits).where(eq(inputWaits.id, id)))[0];

describe('a 2025 server’s question mid-call', () => {
  it('is answered by the person who asked, checked, once, while the call waits past its own deadline', async () => {
    const shown = await question('live-1');
    expect(shown.requests).toEqual([
      expect.objectContaining({ mode: 'form', message: 'Where should the mug go?' }),
    ]);
    expect(await waitRow(shown.inputId)).toMatchObject({ status: 'waiting', resume: null });
    expect((await answer(shown.inputId, { action: 'accept', content: {} }, keys.mallory)).status).toBe(403);
    const invalid = await answer(shown.inputId, { action: 'accept', content: { address: 'x' } });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ fields: { address: 'Enter at least 3 characters.' } });
    // Longer than the call's 1.5 s deadline: the deadline waits while the person answers.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const content = { address: '1 Main St', speed: 'express', copies: 2 };
    expect((await answer(shown.inputId, { action: 'accept', content })).status).toBe(200);
    expect((await answer(shown.inputId, { action: 'decline' })).status).toBe(409);
    await app.settle();
    expect(resultOf('live-1')).toBe('Shipping the mug to 1 Main St (express, 2 copies).');
    // The server got exactly the form's fields, the left-out one with its default.
    expect(shop.calls.findLast((call) => call.tool === 'ship')?.answer).toEqual({
      action: 'accept',
      content: { ...content, gift: false },
    });
    expect(await audited('call_live-1')).toEqual([
      expect.objectContaining({
        actor: 'dev',
        arguments: expect.objectContaining({
          action: 'accept',
          fields: ['address', 'speed', 'copies', 'gift'],
        }),
      }),
    ]);
  }, 30_000);

  it('goes on with decline, and declines a form asking for a secret without showing it', async () => {
    const shown = await question('live-2');
    expect((await answer(shown.inputId, { action: 'decline' })).status).toBe(200);
    await app.settle();
    expect(resultOf('live-2')).toBe('The person declined to say where the mug goes.');

    const events = await ask('live-3', 'shop', 'sign_in', { user: 'dev' }, 'No password given.');
    expect(events.some(asked)).toBe(false);
    await app.settle();
    expect(resultOf('live-3')).toBe('Sign-in answered: decline');
    expect(await audited('call_live-3')).toEqual([
      expect.objectContaining({
        actor: 'butler',
        arguments: expect.objectContaining({ action: 'decline', why: expect.stringContaining('password') }),
      }),
    ]);
  }, 30_000);

  it('cancels when nobody answers in time', async () => {
    const shown = await question('live-4');
    await app.butler.database.db
      .update(inputWaits)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(inputWaits.id, shown.inputId));
    await app.settle();
    expect(resultOf('live-4')).toBe('The person cancelled shipping the mug.');
    expect((await answer(shown.inputId, { action: 'decline' })).status).toBe(409);
  }, 30_000);

  it('lapses when the server stops waiting for the answer', async () => {
    const events = await ask('live-7', 'shop', 'ship', { item: 'mug', waitMs: 1_000 }, 'It gave up.');
    const shown = events.at(-1)?.data as { inputId: string };
    await app.settle();
    expect(resultOf('live-7')).toContain('Request timed out');
    expect(await waitRow(shown.inputId)).toMatchObject({ status: 'lapsed' });
    expect((await answer(shown.inputId, { action: 'decline' })).status).toBe(409);
    expect(await audited('call_live-7')).toEqual([
      expect.objectContaining({
        actor: 'butler',
        arguments: expect.objectContaining({ action: 'cancel', why: 'the server stopped waiting for it' }),
      }),
    ]);
  }, 30_000);

  it('reaches the one call open on a stdio session', async () => {
    const shown = await question('live-5', 'desk');
    const content = { address: '5 Desk Row', speed: 'standard' };
    expect((await answer(shown.inputId, { action: 'accept', content })).status).toBe(200);
    await app.settle();
    expect(resultOf('live-5')).toBe('Shipping the mug to 5 Desk Row (standard, 1 copies).');
    expect(readCallLog(deskLog).at(-1)).toMatchObject({ tool: 'ship', answer: { action: 'accept' } });
  }, 30_000);

  it('declines a stdio question it cannot match to one call, rather than ask the wrong person', async () => {
    // The fake model answers in the order it is asked: the first turn's reply after its call comes last.
    const first = await question('live-8', 'desk', null);
    // A second call on the same stdio session while the first waits: its question names no call.
    const events = await ask('live-9', 'desk', 'ship', { item: 'lamp' }, 'Declined.');
    expect(events.some(asked)).toBe(false);
    model.enqueue({ text: 'Cancelled.' });
    expect((await answer(first.inputId, { action: 'cancel' })).status).toBe(200);
    await app.settle();
    expect(resultOf('live-9')).toBe('The person declined to say where the lamp goes.');
    expect(resultOf('live-8')).toBe('The person cancelled shipping the mug.');
  }, 30_000);

  it('lapses when Butler shuts down before the answer: the call ends with cancel, and the person is told', async () => {
    // `question` queued the model's reply after the call: the turn ends with it, before Butler does.
    const shown = await question('live-6', 'shop', 'It was cancelled: Butler is restarting.');
    await app.stop();
    app = await startTestButler(options(app.databaseUrl));
    await app.settle(20_000);
    // The call stopped waiting at once and its turn ended before Butler did: it was not interrupted and retried.
    expect(resultOf('live-6')).toBe('The person cancelled shipping the mug.');
    expect(await waitRow(shown.inputId)).toMatchObject({ status: 'lapsed' });
    expect(
      (await answer(shown.inputId, { action: 'accept', content: { address: '1 Main St' } })).status,
    ).toBe(409);
    expect(await audited('call_live-6')).toEqual([
      expect.objectContaining({
        actor: 'butler',
        arguments: expect.objectContaining({
          action: 'cancel',
          why: 'Butler shut down before it was answered',
        }),
      }),
    ]);
    expect(await replayOf('live-6')).toContain(
      "shop's question lapsed: Butler shut down before it was answered, so its call was cancelled.",
    );
  }, 60_000);

  it('lapses a question whose process stopped vouching for it (a crash), telling the person', async () => {
    const shown = await question('live-10');
    // As if the process holding the call had died: nobody renewed the question's lease.
    await app.butler.database.db
      .update(inputWaits)
      .set({ liveUntil: new Date(Date.now() - 1_000) })
      .where(eq(inputWaits.id, shown.inputId));
    expect((await answer(shown.inputId, { action: 'decline' })).status).toBe(409);
    await app.settle();
    expect(await waitRow(shown.inputId)).toMatchObject({ status: 'lapsed' });
    expect(resultOf('live-10')).toBe('The person cancelled shipping the mug.');
    expect(await replayOf('live-10')).toContain(
      "shop's question lapsed: Butler restarted before it was answered, so its call was cancelled.",
    );
  }, 30_000);
});
