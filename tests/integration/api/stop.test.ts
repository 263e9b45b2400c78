import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { readEvents } from '../../helpers/sse-client.js';

/** Stopping a turn over the HTTP API: `POST …/stop`, or a message `stop`, while the reply streams. */

const key = 'stop-key-0123456789abcdef';
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', KEY_CI: key },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
    config: { api: { keys: [{ name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat'] }] } },
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});

const call = (path: string, body?: unknown) =>
  fetch(`${app.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** Starts a turn that streams for seconds; resolves once the reply is under way, with its stream's events. */
async function slowTurn(conversation: string) {
  model.enqueue({
    text: 'x',
    chunks: Array.from({ length: 200 }, (_, index) => `part${index} `),
    chunkDelayMs: 50,
  });
  const streamed = call(`/conversations/${conversation}/messages`, { text: 'tell me a long story' }).then(
    readEvents,
  );
  while (!(model.requests.length > 0 && Date.now() - (model.requests.at(-1)?.receivedAt ?? 0) > 200))
    await new Promise((resolve) => setTimeout(resolve, 25));
  return { streamed };
}

describe(`stopping over the API (${databaseKind})`, () => {
  it('stops the running turn with POST …/stop; its stream ends with the marked reply', async () => {
    model.reset();
    const { streamed } = await slowTurn('stop-route');
    const stopped = await call('/conversations/stop-route/stop');
    expect(stopped.status).toBe(202);
    expect(await stopped.json()).toEqual({ status: 'stopping' });
    const events = await streamed;
    const reply = events.find((event) => event.data.type === 'message' && event.data.role === 'assistant');
    expect(String(reply?.data.content)).toMatch(/^part0 [\s\S]*\n\n_Stopped by ci-bot\._$/);
    expect(events.at(-1)?.data.type).toBe('done');

    await app.settle();
    const idle = await call('/conversations/stop-route/stop');
    expect([idle.status, await idle.json()]).toEqual([200, { status: 'idle' }]);
  });

  it('takes a message "stop" as a stop while a turn runs', async () => {
    model.reset();
    const { streamed } = await slowTurn('stop-message');
    const stopped = await call('/conversations/stop-message/messages', { text: 'stop' });
    expect([stopped.status, await stopped.json()]).toEqual([202, { status: 'stopping' }]);
    const events = await streamed;
    expect(events.map((event) => event.data.type)).toContain('done');
    expect(model.requests).toHaveLength(1);
  });
});
