import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { makeDensePdf } from '../../helpers/sample-files.js';
import { readEvents } from '../../helpers/sse-client.js';

/**
 * A small PDF crafted to be slow to read (a page of a million text operators, about 10 KB) sent by any `chat`
 * key: read off the main thread with a deadline, it costs its reader, never the service's event loop.
 */

const key = 'chat-key-0123456789abcdef';
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', KEY_CHAT: key },
    config: {
      // A deadline under what starting the reader (a worker thread loading pdf.js) takes on any machine, let alone
      // reading a page of a million operators; no character limit to stop the reading early.
      files: { readSeconds: 0.05, maxFileCharacters: 2_000_000, maxTurnCharacters: 2_000_000 },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      api: { keys: [{ name: 'anyone', key: '${KEY_CHAT}', scopes: ['chat'] }] },
    },
  });
});
afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe(`a PDF crafted to be slow on ${databaseKind}`, () => {
  it('keeps /healthz answering within a second while it is read, and says it could not read it in time', async () => {
    const pdf = await makeDensePdf(1_000_000, 'a');
    model.enqueue({ text: 'I could not open that one.' });
    const slowest = { ms: 0 };
    let reading = true;
    const probe = (async () => {
      while (reading) {
        const started = performance.now();
        const response = await fetch(`${app.url}/healthz`);
        await response.text();
        slowest.ms = Math.max(slowest.ms, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const response = await fetch(`${app.url}/api/v1/conversations/slow-pdf/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        text: 'what does this say?',
        files: [
          { name: 'dense.pdf', mimeType: 'application/pdf', data: Buffer.from(pdf).toString('base64') },
        ],
      }),
    });
    const events = await readEvents(response);
    reading = false;
    await probe;

    expect(response.status).toBe(200);
    expect(slowest.ms).toBeLessThan(1000);
    const said = JSON.stringify([events, model.requests.at(-1)?.messages]);
    expect(said).toContain('could not read this PDF in time');
  });
});
