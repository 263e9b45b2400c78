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
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import { readEvents, types } from '../../helpers/sse-client.js';

/**
 * A 2026-07-28 MCP server asks the person mid-call (`input_required`): over the HTTP API the key that asked gets
 * an `input_required` event, answers with POST /api/v1/inputs/{id}, and the call is made again with the answers
 * and the server's `requestState` as they came; once, whoever else tries, even across a restart.
 */

const keys = questionKeys;
let model: FakeModelServer;
let shop: Awaited<ReturnType<typeof start2026HttpServer>>;
let app: TestButler;
const dataDir = mkdtempSync(join(tmpdir(), 'butler-elicitation-'));

function options(databaseUrl?: string): TestButlerOptions {
  return {
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
    env: questionEnv(model),
    config: {
      mcpServers: [{ name: 'shop', url: shop.url, tools: { risk: { ship: 'low' } } }],
      api: questionKeysConfig.api,
    },
  };
}

beforeAll(async () => {
  model = await startFakeModelServer();
  shop = await start2026HttpServer();
  app = await startTestButler(options());
});
afterAll(async () => {
  await app.close();
  await shop.close();
  await model.close();
});

const { api, answer } = questionApi(() => app.url);

/** Asks Butler to call `tool`; returns the stream's events once it ends. */
async function ask(conversation: string, tool: string, args: Record<string, unknown>, then?: string) {
  model.enqueue({
    toolCalls: [{ id: `call_${conversation}`, name: `shop__${tool}`, arguments: JSON.stringify(args) }],
  });
  // A reply for after the call, when it goes on without waiting for anyone.
  if (then) model.enqueue({ text: then });
  const response = await api(`/conversations/${conversation}/messages`, {
    method: 'POST',
    body: JSON.stringify({ text: `please ${tool}` }),
  });
  return readEvents(response);
}

async function askedInput(conversation: string) {
  const events = await ask(conversation, 'ship', { item: 'mug' });
  const last = events.at(-1)?.data;
  expect(last?.type).toBe('input_required');
  return String(last?.inputId);
}

const answersAudited = (toolCallId: string) =>
  app.butler.database.db
    .select({ actor: auditLog.actor, arguments: auditLog.arguments })
    .from(auditLog)
    .where(and(eq(auditLog.toolCallId, toolCallId), eq(auditLog.decision, 'answered')));

/** The tool result the model was given for the call of `conversation`. */
const resultOf = (conversation: string) => toolResultOf(model, `call_${conversation}`);

describe('a server’s question over the HTTP API', () => {
  it('is answered by the key that asked, checked against the form, once; the call goes on with it', async () => {
    const events = await ask('elicit-1', 'ship', { item: 'mug' });
    expect(types(events).at(-1)).toBe('input_required');
    const question = events.at(-1)?.data as { inputId: string; requests: Array<Record<string, unknown>> };
    expect(question).toMatchObject({ server: 'shop', tool: 'shop__ship' });
    expect(question.requests).toEqual([
      expect.objectContaining({ key: 'shipping', mode: 'form', message: 'Where should the mug go?' }),
    ]);
    const callsBefore = shop.calls.length;

    const stranger = await answer(
      question.inputId,
      { action: 'accept', content: { address: '9 Elsewhere', speed: 'standard' } },
      keys.mallory,
    );
    expect(stranger.status).toBe(403);
    const invalid = await answer(question.inputId, {
      action: 'accept',
      content: { address: 'x', copies: 9, speed: '' },
    });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: 'invalid',
      fields: { address: 'Enter at least 3 characters.', speed: 'Required.', copies: 'Enter 5 or less.' },
    });
    expect(shop.calls.length).toBe(callsBefore);

    model.enqueue({ text: 'Your mug is on its way.' });
    const content = { address: '1 Main St', speed: 'express', copies: '2', note: 'not in the form' };
    const taken = await answer(question.inputId, { action: 'accept', content });
    expect(taken.status).toBe(200);
    await app.settle();
    expect(shop.calls.at(-1)).toEqual({
      tool: 'ship',
      args: { item: 'mug' },
      inputResponses: {
        shipping: {
          action: 'accept',
          content: { address: '1 Main St', speed: 'express', copies: 2, gift: false },
        },
      },
      requestState: 'ship:mug',
    });
    expect(resultOf('elicit-1')).toContain('Shipped mug:');
    expect((await answer(question.inputId, { action: 'decline' })).status).toBe(409);
    await app.settle();
    expect(shop.calls.length).toBe(callsBefore + 1);
    // The answer is audited: who, which question, the action and the fields filled in; never their values.
    const answered = await answersAudited('call_elicit-1');
    expect(answered).toEqual([
      expect.objectContaining({
        actor: 'dev',
        arguments: {
          server: 'shop',
          question: 'shipping',
          action: 'accept',
          fields: ['address', 'speed', 'copies', 'gift'],
        },
      }),
    ]);
    expect(JSON.stringify(answered)).not.toContain('Main St');
  });

  it('goes on with decline, and with cancel once the wait expires', async () => {
    const declined = await askedInput('elicit-2');
    model.enqueue({ text: 'Not shipped.' });
    expect((await answer(declined, { action: 'decline' })).status).toBe(200);
    await app.settle();
    expect(resultOf('elicit-2')).toContain('Not shipped: the person chose decline.');

    const lapsed = await askedInput('elicit-3');
    model.enqueue({ text: 'Nobody answered.' });
    await app.butler.database.db
      .update(inputWaits)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(inputWaits.id, lapsed));
    await expect.poll(() => resultOf('elicit-3')?.includes('cancel'), { timeout: 10_000 }).toBe(true);
    expect(resultOf('elicit-3')).toContain('Not shipped: the person chose cancel.');
    expect(
      (await answer(lapsed, { action: 'accept', content: { address: '1 Main St', speed: 'express' } }))
        .status,
    ).toBe(409);
  });

  it('declines a form that asks for a password without showing it, and says so', async () => {
    const events = await ask('elicit-4', 'sign_in', {}, 'It wanted a password; I did not give one.');
    expect(types(events)).not.toContain('input_required');
    await app.settle();
    expect(resultOf('elicit-4')).toContain('Sign-in answered: decline');
    const replay = JSON.stringify(await readEvents(await api('/conversations/elicit-4/events?after=0')));
    expect(replay).toContain('never asks for passwords, tokens or keys in a form');
    expect(await answersAudited('call_elicit-4')).toEqual([
      expect.objectContaining({
        actor: 'butler',
        arguments: expect.objectContaining({ action: 'decline', why: expect.stringContaining('password') }),
      }),
    ]);
  });

  it('shows a question a crash kept from being shown', async () => {
    const inputId = await askedInput('elicit-6');
    // As if Butler died between storing the wait and posting its question.
    await app.butler.database.db
      .update(inputWaits)
      .set({ formMessageId: null, createdAt: new Date(Date.now() - 60_000) })
      .where(eq(inputWaits.id, inputId));
    const shownAgain = async () => {
      const events = await readEvents(await api('/conversations/elicit-6/events?after=0&follow=false'));
      return events.filter((event) => event.data.type === 'input_required').length;
    };
    await expect.poll(shownAgain, { timeout: 10_000 }).toBe(2);
    // Recorded once posted: a moment after the event is there.
    const recorded = async () =>
      (await app.butler.database.db.select().from(inputWaits).where(eq(inputWaits.id, inputId)))[0]
        ?.formMessageId;
    await expect.poll(recorded, { timeout: 10_000 }).toBe(`input-${inputId}`);
  });

  it('resumes the call once after a restart between the question and the answer', async () => {
    const inputId = await askedInput('elicit-5');
    const callsBefore = shop.calls.length;
    await app.stop();
    app = await startTestButler(options(app.databaseUrl));
    model.enqueue({ text: 'Shipped after all.' });
    const content = { address: '2 Side St', speed: 'standard' };
    expect((await answer(inputId, { action: 'accept', content })).status).toBe(200);
    expect((await answer(inputId, { action: 'accept', content })).status).toBe(409);
    await app.settle();
    expect(shop.calls.slice(callsBefore)).toEqual([
      expect.objectContaining({
        requestState: 'ship:mug',
        // The fields left out take the defaults the form showed (SEP-1034).
        inputResponses: { shipping: { action: 'accept', content: { ...content, copies: 1, gift: false } } },
      }),
    ]);
    expect(resultOf('elicit-5')).toContain('Shipped mug:');
  }, 60_000);
});
