import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { createPostgresDatabase, dropPostgresDatabase, testPoolerUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { readEvents, type SseEvent } from '../../helpers/sse-client.js';

/**
 * Butler behind a transaction pooler (Debian's PgBouncer, transaction mode, stock settings otherwise:
 * tests/pgbouncer/start.sh) without DATABASE_DIRECT_URL: it starts, says in /readyz that LISTEN cannot work
 * there, and its live events still reach every process, read from the database. Two processes share it.
 * Runs when TEST_POOLER_URL is set (CI's pooler pass); every other Postgres test then runs through the pooler
 * with the direct URL beside it.
 */

const key = 'pooler-key-0123456789abcdef';
const authorized = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
let model: FakeModelServer;
let databaseUrl: string;
let left: TestButler;
let right: TestButler;

beforeAll(async () => {
  if (!testPoolerUrl) return;
  model = await startFakeModelServer();
  model.setFallback({ text: 'Hello through the pooler.' });
  databaseUrl = await createPostgresDatabase();
  const start = () =>
    startTestButler({
      databaseUrl,
      // The pooler alone: no way to the server for LISTEN.
      env: { DATABASE_DIRECT_URL: '', BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', KEY: key },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      config: { api: { keys: [{ name: 'ci-bot', key: '${KEY}', scopes: ['chat', 'read'] }] } },
    });
  left = await start();
  right = await start();
});
afterAll(async () => {
  await left?.close();
  await right?.close();
  await model?.close();
  if (databaseUrl) await dropPostgresDatabase(databaseUrl);
});

describe.runIf(testPoolerUrl)('behind a transaction pooler without its direct URL', () => {
  it('starts, says live events are read from the database, and streams them to every process', async () => {
    const ready = (await (await fetch(`${left.url}/readyz`)).json()) as { ready: boolean; database?: string };
    expect(ready.ready).toBe(true);
    expect(ready.database).toMatch(/transaction pooler: live events are read from the database/);

    // A console on the other process follows every process's events.
    const controller = new AbortController();
    const followed = fetch(`${right.url}/api/v1/events`, {
      headers: authorized,
      signal: controller.signal,
    }).then((response) =>
      readEvents(response, (_event, all: SseEvent[]) =>
        all.some((event) => event.data.type === 'turn_finished'),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const asked = await fetch(`${left.url}/api/v1/conversations/pooled/messages`, {
      method: 'POST',
      headers: authorized,
      body: JSON.stringify({ text: 'hello' }),
    });
    expect(asked.status).toBe(200);
    await readEvents(asked);
    const events = await Promise.race([
      followed,
      new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('no live events')), 10_000)),
    ]);
    controller.abort();
    expect(events.map((event) => event.data.type)).toEqual(
      expect.arrayContaining(['turn_started', 'turn_finished']),
    );
  });
});
