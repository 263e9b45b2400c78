import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { turnTraceId } from '../../../src/observability/langfuse-scores.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeLangfuse, startFakeLangfuse } from '../../helpers/fake-langfuse.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { readEvents } from '../../helpers/sse-client.js';

/** Rating replies over the HTTP API, listing the ratings, and each rating as a score on its Langfuse trace. */

const keys = { ci: 'ci-key-0123456789abcdef', other: 'other-key-0123456789abcdef' };

let model: FakeModelServer;
let langfuse: FakeLangfuse;

beforeAll(async () => {
  model = await startFakeModelServer();
  langfuse = await startFakeLangfuse();
});
afterAll(async () => {
  await model.close();
  await langfuse.close();
});
beforeEach(() => model.reset());

function startButler(tracing: boolean): Promise<TestButler> {
  return startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_CI: keys.ci,
      KEY_OTHER: keys.other,
      LANGFUSE_ENABLED: String(tracing),
      LANGFUSE_PUBLIC_KEY: 'pk-lf-test',
      LANGFUSE_SECRET_KEY: 'sk-lf-test',
      LANGFUSE_BASE_URL: langfuse.baseUrl,
    },
    config: {
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'other', key: '${KEY_OTHER}', scopes: ['chat'] },
        ],
      },
    },
  });
}

function call(app: TestButler, path: string, body?: unknown, key = keys.ci) {
  return fetch(`${app.url}/api/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Asks in a new conversation; the turn id is what the stream's `done` event names. */
async function answeredTurn(app: TestButler): Promise<string> {
  model.enqueue({ text: 'Deployed.' });
  const response = await call(app, `/conversations/fb-${Date.now()}/messages`, { text: 'deploy?' });
  const done = (await readEvents(response)).at(-1)?.data;
  expect(done).toMatchObject({ type: 'done', turnId: expect.any(String) });
  return String(done?.turnId);
}

describe(`feedback over the HTTP API on ${databaseKind}`, () => {
  let app: TestButler;
  beforeAll(async () => {
    app = await startButler(false);
  });
  afterAll(() => app.close());

  it('rates a turn, changes the rating on a second call, and lists it newest first', async () => {
    const turnId = await answeredTurn(app);
    const first = await call(app, `/turns/${turnId}/feedback`, { rating: 'negative', comment: 'Too vague.' });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ turnId, rating: 'negative', comment: 'Too vague.' });
    const second = await call(app, `/turns/${turnId}/feedback`, { rating: 'positive' });
    expect(await second.json()).toMatchObject({ rating: 'positive', comment: null });

    const list = (await (await call(app, '/feedback?limit=10')).json()) as {
      items: Array<{ turnId: string }>;
    };
    const mine = list.items.filter((item) => item.turnId === turnId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ rating: 'positive', rater: { platform: 'api', id: 'ci-bot' } });
    expect(list.items[0]?.turnId).toBe(turnId);
  });

  it("refuses another key's turn, an unknown turn, a bad body, and listing without the read scope", async () => {
    const turnId = await answeredTurn(app);
    const foreign = await call(app, `/turns/${turnId}/feedback`, { rating: 'positive' }, keys.other);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ error: 'not_a_reply' });
    expect((await call(app, '/turns/no-such-turn/feedback', { rating: 'positive' })).status).toBe(404);
    expect((await call(app, `/turns/${turnId}/feedback`, { rating: 'great' })).status).toBe(400);
    expect((await call(app, '/feedback', undefined, keys.other)).status).toBe(403);
  });

  it('documents both endpoints in the OpenAPI document', async () => {
    const document = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(document.paths['/turns/{id}/feedback']?.post?.['x-scope']).toBe('chat');
    expect(document.paths['/feedback']?.get?.['x-scope']).toBe('read');
  });
});

describe('feedback as a Langfuse score', () => {
  it("scores the turn's own trace; a changed rating replaces the score", async () => {
    const app = await startButler(true);
    let turnId = '';
    try {
      turnId = await answeredTurn(app);
      await call(app, `/turns/${turnId}/feedback`, { rating: 'negative', comment: 'Wrong service.' });
      await call(app, `/turns/${turnId}/feedback`, { rating: 'positive' });
    } finally {
      await app.close();
    }
    const traceId = turnTraceId(turnId);
    expect(langfuse.spans.some((span) => span.name === 'butler.turn' && span.traceId === traceId)).toBe(true);
    const scores = langfuse.scores.filter((score) => score.traceId === traceId);
    expect(scores).toHaveLength(1);
    expect(scores[0]).toMatchObject({ name: 'user-feedback', value: 1, dataType: 'BOOLEAN' });
    expect(scores[0]?.authorization).toBe(`Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`);
  });
});
