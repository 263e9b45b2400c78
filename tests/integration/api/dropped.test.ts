import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { readEvents } from '../../helpers/sse-client.js';

/** A message Butler drops without a turn (over the rate limit) still ends the caller's stream. */

const key = 'ci-key-0123456789abcdef';
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', KEY_CI: key },
    config: {
      rateLimit: { messagesPerMinute: 1 },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      api: { keys: [{ name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat'] }] },
    },
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});

const send = (id: string, text: string) =>
  fetch(`${app.url}/api/v1/conversations/${id}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
    signal: AbortSignal.timeout(10_000),
  });

describe(`HTTP API on ${databaseKind}: messages over the rate limit`, () => {
  it('ends the stream of each dropped message with an error, the notice only once', async () => {
    const id = `limits-${Date.now()}`;
    model.enqueue({ text: 'First answer.' });
    const answered = await readEvents(await send(id, 'one'));
    expect(answered.at(-1)?.data.type).toBe('done');

    const response = await send(id, 'two');
    const second = await readEvents(response);
    const shown = second.map((event) => event.data);
    // The worker may drop the message (and say so) as soon as it is stored, before the message itself is
    // written to the stream: either may come first; the error ends the stream.
    expect(shown).toHaveLength(3);
    expect(shown.slice(0, 2)).toEqual(
      expect.arrayContaining([
        { type: 'message', role: 'user', content: 'two' },
        { type: 'message', role: 'assistant', content: expect.stringMatching(/faster/) },
      ]),
    );
    expect(shown[2]).toEqual({
      type: 'error',
      error: expect.stringMatching(/faster/),
      answers: [response.headers.get('butler-message-id')],
    });
    const third = await readEvents(await send(id, 'three'));
    expect(third.map((event) => event.data.type)).toEqual(['message', 'error']);
    expect(model.requests).toHaveLength(1);
  });
});
