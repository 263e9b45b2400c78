import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { files } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { makePng, sampleCsv } from '../../helpers/sample-files.js';
import { readEvents } from '../../helpers/sse-client.js';

/** Files over the HTTP API: shared in a message (JSON or multipart), sent by Butler, downloaded. */

const keys = {
  ci: 'ci-key-0123456789abcdef',
  other: 'other-key-0123456789abcdef',
  reader: 'reader-key-0123456789abcdef',
};

let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_CI: keys.ci,
      KEY_OTHER: keys.other,
      KEY_READER: keys.reader,
    },
    config: {
      // Small limits, so that a test goes past them with little data: 50 KB a file, 150 KB a message.
      files: { maxFileMegabytes: 50 / 1024, maxTurnMegabytes: 150 / 1024, maxFilesPerTurn: 2 },
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'other', key: '${KEY_OTHER}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'reader', key: '${KEY_READER}', scopes: ['read'] },
        ],
      },
    },
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});
beforeEach(() => model.reset());

let conversation = 0;
const newConversation = () => `files-${Date.now()}-${++conversation}`;

function call(path: string, init: RequestInit & { key?: string } = {}) {
  const { key = keys.ci, ...rest } = init;
  return fetch(`${app.url}/api/v1${path}`, {
    ...rest,
    headers: { authorization: `Bearer ${key}`, ...rest.headers },
  });
}

const sendJson = (id: string, body: unknown) =>
  call(`/conversations/${id}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const base64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');

/** The parts of the newest user message the model was sent. */
function lastUserParts(): Array<Record<string, unknown>> {
  const user = model.requests.at(-1)?.messages.findLast((message) => message.role === 'user');
  const content = user?.content;
  return Array.isArray(content) ? content : [{ type: 'text', text: content }];
}

describe(`files over the HTTP API on ${databaseKind}`, () => {
  it('shows the model a PNG sent as base64 JSON, as an image', async () => {
    model.enqueue({ text: 'A blue rectangle.' });
    const png = await makePng(64, 48);
    const response = await sendJson(newConversation(), {
      text: 'what is this?',
      files: [{ name: 'chart.png', mimeType: 'image/png', data: base64(png) }],
    });
    expect(response.status).toBe(200);
    await readEvents(response);
    const parts = lastUserParts();
    expect(parts).toContainEqual(
      expect.objectContaining({
        type: 'image_url',
        image_url: expect.objectContaining({ url: expect.stringMatching(/^data:image\/jpeg;base64,/) }),
      }),
    );
    expect(JSON.stringify(parts)).toContain('what is this?');
  });

  it('reads a CSV sent as multipart/form-data, also with no text', async () => {
    model.enqueue({ text: 'api has 12 errors.' }, { text: 'Same file.' });
    const form = new FormData();
    form.append('text', 'which service has errors?');
    form.append('report', new Blob([sampleCsv], { type: 'text/csv' }), 'errors.csv');
    const id = newConversation();
    const response = await call(`/conversations/${id}/messages`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    await readEvents(response);
    const text = JSON.stringify(lastUserParts());
    expect(text).toContain('which service has errors?');
    expect(text).toContain(JSON.stringify(sampleCsv).slice(1, -1));

    const alone = new FormData();
    alone.append('file', new Blob(['a,b\n3,4\n'], { type: 'text/csv' }), 'more.csv');
    const second = await call(`/conversations/${id}/messages`, { method: 'POST', body: alone });
    expect(second.status).toBe(200);
    await readEvents(second);
    expect(JSON.stringify(lastUserParts())).toContain('a,b\\n3,4\\n');
  });

  it('refuses a file over the limit with 413, bad base64 and too many files with 400, accepting nothing', async () => {
    const id = newConversation();
    const big = await sendJson(id, {
      text: 'read this',
      files: [{ name: 'big.csv', data: base64('x'.repeat(60 * 1024)) }],
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({
      error: 'file_too_large',
      message: 'big.csv is 60 KB; a file may be at most 50 KB (files.maxFileMegabytes).',
    });
    const form = new FormData();
    form.append('file', new Blob(['y'.repeat(60 * 1024)]), 'big.log');
    expect((await call(`/conversations/${id}/messages`, { method: 'POST', body: form })).status).toBe(413);
    // Past what a message's files may be in all, the body is not even read to its end.
    const huge = await sendJson(id, { files: [{ name: 'huge.bin', data: base64('z'.repeat(300 * 1024)) }] });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: 'payload_too_large' });

    const bad = await sendJson(id, { text: 'hi', files: [{ name: 'a.txt', data: 'not base64!' }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ message: expect.stringMatching(/^files\.0\.data: /) });
    const small = { name: 'a.txt', data: base64('a') };
    const many = await sendJson(id, { text: 'hi', files: [small, small, small] });
    expect(many.status).toBe(400);
    expect(await many.json()).toMatchObject({ error: 'too_many_files' });
    const empty = await sendJson(id, { text: '  ', files: [] });
    expect(await empty.json()).toMatchObject({ message: 'text: required unless files are sent' });

    await app.settle();
    expect(model.requests).toHaveLength(0);
    expect((await call(`/conversations/${id}/events`)).status).toBe(404);
  });

  it('streams a file the model attaches, served with its bytes to keys that may read it', async () => {
    const content = 'a,b\n1,2\n';
    model.enqueue(
      {
        toolCalls: [
          {
            id: 'attach_1',
            name: 'attach_file',
            arguments: JSON.stringify({ filename: 'errors.csv', content }),
          },
        ],
      },
      { text: 'Attached errors.csv.' },
    );
    const response = await sendJson(newConversation(), { text: 'give me the errors as CSV' });
    const events = await readEvents(response);
    const file = events.find((event) => event.data.type === 'file')?.data;
    expect(file).toEqual({
      type: 'file',
      id: expect.any(String),
      name: 'errors.csv',
      mimeType: 'text/csv',
      size: content.length,
      url: `/api/v1/files/${file?.id}`,
    });
    // With the call that made it, in the turn's order (the reply's text may come in several deltas).
    const types = events.map((event) => event.data.type).filter((type) => type !== 'delta');
    expect(types).toEqual(['message', 'tool_call', 'file', 'tool_result', 'message', 'done']);

    const download = await fetch(`${app.url}${file?.url}`, {
      headers: { authorization: `Bearer ${keys.ci}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/csv');
    expect(download.headers.get('content-length')).toBe(String(content.length));
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="errors.csv"; filename*=UTF-8''errors.csv`,
    );
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await download.text()).toBe(content);

    // A key with `read` reads every conversation's files; another key's own conversations are not its.
    expect((await call(`/files/${file?.id}`, { key: keys.reader })).status).toBe(200);
    const other = await call(`/files/${file?.id}`, { key: keys.other });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: 'not_found', message: 'No such file.' });
    expect((await call('/files/file_nothere')).status).toBe(404);
    expect((await fetch(`${app.url}${file?.url}`)).status).toBe(401);
  });

  it('answers a repeated Idempotency-Key with 409 before its files are read or stored', async () => {
    model.enqueue({ text: 'Read it.' });
    const id = newConversation();
    const message = {
      text: 'the numbers',
      files: [{ name: 'numbers.csv', mimeType: 'text/csv', data: base64('a,b\n1,2\n') }],
    };
    const send = (name: string) =>
      call(`/conversations/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'same-upload' },
        body: JSON.stringify({ ...message, files: [{ ...message.files[0], name }] }),
      });
    const first = await send('numbers.csv');
    expect(first.status).toBe(200);
    await readEvents(first);
    const stored = async () => (await app.butler.database.db.select().from(files)).length;
    const before = await stored();
    const again = await send('again.csv');
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'duplicate' });
    expect(await stored()).toBe(before);
  });
});
