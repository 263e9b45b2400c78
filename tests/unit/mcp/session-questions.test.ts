import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { InputRequest } from '../../../src/core/contracts/input-needed.js';
import { type Asker, SessionQuestions } from '../../../src/core/tools/mcp/session-questions.js';

/**
 * Which call a question pushed over a 2025 session (`elicitation/create`, naming no call) belongs to, and the
 * call's deadline while its person answers. The SDK's request handler is taken as the client registers it and
 * called as the SDK calls it, without an async context (as on stdio, where no response stream names the call).
 */

type Handler = (
  request: { method: string; params: unknown },
  context: { mcpReq: { signal: AbortSignal } },
) => Promise<{ action: string; content?: unknown }>;

function session() {
  const declined: string[] = [];
  const questions = new SessionQuestions((why) => declined.push(why));
  let handler: Handler | undefined;
  questions.listen({
    setRequestHandler: (_method: string, registered: Handler) => {
      handler = registered;
    },
  } as unknown as Client);
  const push = () => {
    if (!handler) throw new Error('no handler registered');
    const params = {
      mode: 'form',
      message: 'Which project?',
      requestedSchema: { type: 'object', properties: {} },
    };
    return handler(
      { method: 'elicitation/create', params },
      { mcpReq: { signal: new AbortController().signal } },
    );
  };
  return { questions, declined, push };
}

/** A person who accepts at once (after `ms`), remembering what they were asked. */
function asker(person: string, ms = 0): Asker & { asked: InputRequest[] } {
  const asked: InputRequest[] = [];
  return {
    person,
    asked,
    async ask(request) {
      asked.push(request);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { action: 'accept', content: {} };
    },
  };
}

/** A call that stays open until `until` settles, or its signal aborts. */
const openCall = (until: Promise<unknown>) => (signal: AbortSignal) =>
  new Promise((resolve, reject) => {
    void until.then(resolve);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

describe('SessionQuestions', () => {
  it('asks the one open call’s person, and declines when several calls are open', async () => {
    const { questions, declined, push } = session();
    const ada = asker('ada');
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const first = questions.run(
      { timeoutMs: 5_000, signal: new AbortController().signal, asker: ada },
      openCall(done),
    );
    expect(await push()).toEqual({ action: 'accept', content: {} });
    expect(ada.asked).toEqual([expect.objectContaining({ mode: 'form', message: 'Which project?' })]);

    const bob = asker('bob');
    const second = questions.run(
      { timeoutMs: 5_000, signal: new AbortController().signal, asker: bob },
      openCall(done),
    );
    expect(await push()).toEqual({ action: 'decline' });
    expect(ada.asked).toHaveLength(1);
    expect(bob.asked).toHaveLength(0);
    expect(declined).toEqual(['it named no call, and 2 were open']);
    finish();
    await Promise.all([first, second]);
  });

  it('after another person’s call timed out, declines: the server may still be running that call', async () => {
    const { questions, push } = session();
    const never = new Promise(() => {});
    const timedOut = questions.run(
      { timeoutMs: 20, signal: new AbortController().signal, asker: asker('ada') },
      openCall(never),
    );
    await expect(timedOut).rejects.toThrow('Request timed out');

    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const bob = asker('bob');
    const bobs = questions.run(
      { timeoutMs: 5_000, signal: new AbortController().signal, asker: bob },
      openCall(done),
    );
    expect(await push()).toEqual({ action: 'decline' });
    expect(bob.asked).toHaveLength(0);
    finish();
    await bobs;

    // The same person's next call may be asked: whichever of their calls the question is for, it is theirs.
    const ada = asker('ada');
    const adas = questions.run(
      { timeoutMs: 5_000, signal: new AbortController().signal, asker: ada },
      openCall(done),
    );
    expect(await push()).toEqual({ action: 'accept', content: {} });
    expect(ada.asked).toHaveLength(1);
    await adas;
  });

  it('holds the call’s deadline while its person answers, then runs what was left of it', async () => {
    const { questions, push } = session();
    // The server asks as soon as the call is made; the person takes ten times the call's deadline to answer.
    const slow = asker('ada', 1_000);
    const answered = (signal: AbortSignal) =>
      new Promise((resolve, reject) => {
        void push().then(resolve);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    await expect(
      questions.run({ timeoutMs: 100, signal: new AbortController().signal, asker: slow }, answered),
    ).resolves.toEqual({ action: 'accept', content: {} });

    const never = new Promise(() => {});
    const after = questions.run(
      { timeoutMs: 100, signal: new AbortController().signal, asker: asker('ada') },
      (signal) => {
        void push();
        return openCall(never)(signal);
      },
    );
    // Answered: the deadline runs again, and passes.
    await expect(after).rejects.toThrow('Request timed out');
  });
});
