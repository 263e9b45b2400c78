import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../src/core/contracts/errors.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { ModelGate, resetInMs, retryAfterMs } from '../../../src/core/model/model-gate.js';
import { OpenAIModel } from '../../../src/core/model/openai-model.js';
import { SharedModelSlots } from '../../../src/core/model/shared-slots.js';
import { createStore } from '../../../src/storage/store.js';
import { databaseKind, openTestDatabase } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * The model's own limits, over HTTP with the real SDK: a 429 or a spent budget holds back every call to that
 * model in the process, and is waited out while the call's deadline allows.
 */

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModelServer();
});
afterAll(() => model.close());
beforeEach(() => model.reset());

/** Two clients of one model, as a turn and a sub-agent on the same endpoint hold. */
function clients(timeoutMs: number, gate = new ModelGate('test-model')) {
  const options = {
    baseUrl: model.baseUrl,
    apiKey: 'key',
    model: 'test-model',
    timeoutMs,
    maxRetries: 0,
    gate,
  };
  return [new OpenAIModel(options), new OpenAIModel(options)] as const;
}
const ask = (client: OpenAIModel) => client.complete({ messages: [{ role: 'user', content: 'hi' }] });

describe('the model rate limits', () => {
  it('waits out 429s while the deadline allows, however many: maxRetries counts other failures', async () => {
    const limited = { status: 429, headers: { 'retry-after': '0' } };
    model.enqueue(limited, limited, limited, { text: 'At last.' });
    const [client] = clients(10_000);
    expect((await ask(client)).content).toBe('At last.');
    expect(model.requests).toHaveLength(4);
  });

  it('holds back every call to the model after one is told to wait, for as long as it was told', async () => {
    model.enqueue({ status: 429, headers: { 'retry-after-ms': '800' } });
    const gate = new ModelGate('test-model');
    const [first, second] = clients(10_000, gate);
    const answered = ask(first);
    await waitFor(() => gate.waitMs > 0);
    expect((await Promise.all([answered, ask(second)])).map((answer) => answer.content)).toEqual([
      'ok',
      'ok',
    ]);
    // The refused request, then both calls once the wait was over: neither went to the model before.
    const [refused, ...after] = model.requests.map((request) => request.receivedAt);
    expect(after).toHaveLength(2);
    for (const at of after) expect(at - (refused ?? 0)).toBeGreaterThanOrEqual(790);
  });

  it('closes the model when a response says its budget is spent, until the budget resets', async () => {
    model.enqueue({
      text: 'last one this second',
      headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '600ms' },
    });
    const [first, second] = clients(10_000);
    await ask(first);
    await ask(second);
    // The budget closed when the first response's headers came, after its request was received.
    const [firstAt, secondAt] = model.requests.map((request) => request.receivedAt);
    expect((secondAt ?? 0) - (firstAt ?? 0)).toBeGreaterThanOrEqual(600);
  });

  it('says the model is rate-limited at once when the wait would outlast the deadline', async () => {
    model.enqueue({ status: 429, headers: { 'retry-after': '30' } });
    const gate = new ModelGate('test-model');
    const [first, second] = clients(10_000, gate);
    const started = Date.now();
    const refused = ask(first).catch((error: unknown) => error);
    await waitFor(() => gate.waitMs > 0);
    const failures = await Promise.all([refused, ask(second).catch((error: unknown) => error)]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(ModelError);
      expect((failure as ModelError).userMessage).toContain('rate-limited');
    }
    // One request was refused; the other call did not ask again, nor wait for the deadline to fail.
    expect(model.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('reads the waits providers send', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(resetInMs('6m0s')).toBe(360_000);
    expect(resetInMs('1m30.5s')).toBe(90_500);
    expect(resetInMs('20ms')).toBe(20);
    expect(resetInMs('7')).toBe(7000);
    expect(resetInMs('6m0sx')).toBeUndefined();
    expect(resetInMs(null)).toBeUndefined();
  });
});

describe(`model.maxConcurrent across processes on ${databaseKind}`, () => {
  it('lets no more calls run at once than the cap, however many processes ask, and serves every one', async () => {
    const database = await openTestDatabase();
    const store = createStore(database.db);
    // Two processes' worth of slots over one database.
    const processes = [0, 1].map(
      () => new SharedModelSlots(store.modelSlots, { cap: 3, pollMs: 20 }, silentLogger),
    );
    let running = 0;
    let most = 0;
    const call = async (index: number) => {
      const release = await (processes[index % 2] as SharedModelSlots).take(
        'model-a',
        AbortSignal.timeout(20_000),
      );
      running += 1;
      most = Math.max(most, running);
      // Long enough for three takes to overlap however slow the database is.
      await new Promise((resolve) => setTimeout(resolve, 500));
      running -= 1;
      release();
    };
    try {
      await Promise.all(Array.from({ length: 8 }, (_, index) => call(index)));
      expect(most).toBe(3);
      // Another model has slots of its own.
      const other = await (processes[0] as SharedModelSlots).take('model-b', AbortSignal.timeout(5_000));
      other();
    } finally {
      for (const slots of processes) slots.stop();
      await database.close();
    }
  });

  it('gives the slot of a process that died holding it to another once its lease lapses', async () => {
    const database = await openTestDatabase();
    const store = createStore(database.db);
    const dead = new SharedModelSlots(store.modelSlots, { cap: 1, leaseMs: 300 }, silentLogger);
    const alive = new SharedModelSlots(store.modelSlots, { cap: 1, leaseMs: 300, pollMs: 20 }, silentLogger);
    try {
      // The dead process's lease starts inside its take: measure from before it.
      const started = Date.now();
      await dead.take('model-a', AbortSignal.timeout(5_000));
      // The dead process renews nothing from now on.
      dead.stop();
      const release = await alive.take('model-a', AbortSignal.timeout(5_000));
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      release();
      // A call that waits past its deadline gives up with the signal's reason.
      const held = await alive.take('model-a', AbortSignal.timeout(5_000));
      await expect(alive.take('model-a', AbortSignal.timeout(100))).rejects.toThrow(/timeout|aborted/i);
      held();
    } finally {
      alive.stop();
      await database.close();
    }
  });
});
