import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationEventRepository } from '../../../src/core/contracts/conversation-events.js';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind, testDatabaseUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type HeldResponse, holdGet } from '../../helpers/raw-http.js';
import { readEvents, type SseEvent, types } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * API streams are bounded: open streams per key and in all (429 past them), one database read loop per
 * followed conversation however many clients follow it, and quiet streams end (the client resumes).
 */

const keys = { ci: 'ci-key-0123456789abcdef', other: 'other-key-0123456789abcdef' };
const streams = { perKey: 4, total: 6, idleSeconds: 4 };

let model: FakeModelServer;
let app: TestButler;

function options(databaseUrl?: string): TestButlerOptions {
  return {
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      api: {
        keys: [
          { name: 'ci-bot', key: keys.ci, scopes: ['chat', 'read'] },
          { name: 'other', key: keys.other, scopes: ['chat', 'read'] },
        ],
        streams,
      },
    },
    ...(databaseUrl ? { databaseUrl } : {}),
  };
}

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler(options());
});
afterAll(async () => {
  await app.close();
  await model.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

function send(id: string, text: string, key = keys.ci, base = app.url) {
  return fetch(`${base}/api/v1/conversations/${id}/messages`, {
    method: 'POST',
    headers: { ...auth(key), 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
}

/** Counts the reads of the conversation event log, passing each through to the real repository. */
function countReads(repository: ConversationEventRepository) {
  const counts = { listAfter: 0, lastId: 0 };
  const { listAfter, lastId } = repository;
  repository.listAfter = (...args) => {
    counts.listAfter += 1;
    return listAfter(...args);
  };
  repository.lastId = (...args) => {
    counts.lastId += 1;
    return lastId(...args);
  };
  return {
    counts,
    restore() {
      Object.assign(repository, { listAfter, lastId });
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`API stream limits on ${databaseKind}`, () => {
  it('reads a followed conversation once per wake-up, however many clients follow it', async () => {
    const id = `followed-${Date.now()}`;
    model.enqueue({ text: 'First answer.' });
    const first = await readEvents(await send(id, 'hello'));
    const lastId = first.at(-1)?.id ?? '0';

    const reads = countReads(app.butler.store.conversationEvents);
    const followers = Array.from({ length: 3 }, () => {
      const controller = new AbortController();
      const events = fetch(`${app.url}/api/v1/conversations/${id}/events`, {
        headers: { ...auth(keys.ci), 'last-event-id': lastId },
        signal: controller.signal,
      }).then((response) => readEvents(response));
      return { events, stop: () => controller.abort() };
    });
    try {
      await waitFor(() => reads.counts.lastId >= followers.length);
      await sleep(200);
      const before = reads.counts.listAfter;
      await sleep(1000);
      // One loop polls every 250 ms at most (2 s while quiet); three followers polling alone made 12.
      expect(reads.counts.listAfter - before).toBeLessThanOrEqual(5);

      model.enqueue({ text: 'Second answer.', chunks: ['Second ', 'answer.'], chunkDelayMs: 100 });
      const sent = await send(id, 'and now?');
      const own = await readEvents(sent);
      const seen = await Promise.all(followers.map((follower) => follower.events));
      const ids = (events: SseEvent[]) => events.map((event) => event.id);
      for (const events of seen) {
        expect(types(events)).toEqual(types(own));
        expect(ids(events)).toEqual(ids(own));
      }
    } finally {
      reads.restore();
      for (const follower of followers) follower.stop();
    }
  });

  it('ends a stream that stays quiet for idleSeconds; Last-Event-ID resumes it', async () => {
    const id = `quiet-${Date.now()}`;
    model.enqueue({ text: 'Done for now.' });
    const first = await readEvents(await send(id, 'hello'));
    const started = Date.now();
    const quiet = await fetch(`${app.url}/api/v1/conversations/${id}/events`, {
      headers: { ...auth(keys.ci), 'last-event-id': first.at(-1)?.id ?? '0' },
      signal: AbortSignal.timeout(10_000),
    });
    expect(await readEvents(quiet)).toEqual([]);
    const lasted = Date.now() - started;
    expect(lasted).toBeGreaterThanOrEqual(streams.idleSeconds * 1000 - 100);
    expect(lasted).toBeLessThan(streams.idleSeconds * 1000 + 3000);
  });

  it.skipIf(!testDatabaseUrl)(
    'streams a turn that another process runs, woken by the bus rather than a fast poll',
    async () => {
      const second = await startTestButler(options(app.databaseUrl));
      try {
        // The second process takes the message and streams it; the first one's worker runs the turn.
        await second.butler.worker.stop(1_000);
        model.enqueue({ text: 'From the other process.', chunks: ['From ', 'the other ', 'process.'] });
        const started = Date.now();
        const events = await readEvents(await send(`across-${Date.now()}`, 'hello', keys.ci, second.url));
        expect(types(events).at(-1)).toBe('done');
        expect(
          events.find((event) => event.data.type === 'message' && event.data.role === 'assistant')?.data,
        ).toMatchObject({ content: 'From the other process.' });
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await second.stop();
      }
    },
  );

  // Last: the places it holds are given back as the server sees each client go, a moment after the test.
  it('refuses streams past the per-key and overall caps with 429 and Retry-After, before taking a message', async () => {
    const held: HeldResponse[] = [];
    try {
      for (let index = 0; index < streams.perKey; index += 1)
        held.push(await holdGet(`${app.url}/api/v1/events`, auth(keys.ci)));
      expect(held.map((stream) => stream.status)).toEqual([200, 200, 200, 200]);

      const overKey = await fetch(`${app.url}/api/v1/events`, { headers: auth(keys.ci) });
      expect(overKey.status).toBe(429);
      expect(overKey.headers.get('retry-after')).toBe('5');
      expect(await overKey.json()).toEqual({
        error: 'too_many_streams',
        message: expect.stringContaining('ci-bot already has 4 open streams'),
      });
      // A message over the cap is not taken: nothing is stored, no turn runs.
      const modelCalls = model.requests.length;
      const refusedMessage = await send('over-the-cap', 'restart payments-api');
      expect(refusedMessage.status).toBe(429);
      const stored = await fetch(`${app.url}/api/v1/conversations/over-the-cap/events`, {
        headers: auth(keys.ci),
      });
      expect(stored.status).toBe(404);
      expect(model.requests).toHaveLength(modelCalls);

      // Another key has its own places, up to the overall cap.
      while (held.length < streams.total)
        held.push(await holdGet(`${app.url}/api/v1/events`, auth(keys.other)));
      const overall = await fetch(`${app.url}/api/v1/events`, { headers: auth(keys.other) });
      expect(overall.status).toBe(429);
      expect(((await overall.json()) as { message: string }).message).toContain('6 open streams');

      // A stream that ends gives its place back.
      held.shift()?.close();
      for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
        const response = await holdGet(`${app.url}/api/v1/events`, auth(keys.ci));
        held.push(response);
        if (response.status === 200) break;
      }
      expect(held.at(-1)?.status).toBe(200);
    } finally {
      for (const stream of held) stream.close();
    }

    // The contract says so.
    const document = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const [path, method] of [
      ['/conversations/{id}/messages', 'post'],
      ['/conversations/{id}/events', 'get'],
      ['/events', 'get'],
    ] as const)
      expect(Object.keys(document.paths[path]?.[method]?.responses ?? {}), path).toContain('429');
  });
});
