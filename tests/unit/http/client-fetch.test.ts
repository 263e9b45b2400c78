import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFetch } from '../../../src/http/client-fetch.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remotePort: number;
}

/** A real HTTP server whose routes answer the cases below; it records what each request carried. */
let server: http.Server;
let base: string;
/** The same server under another origin (localhost rather than 127.0.0.1). */
let otherOrigin: string;
const received: Received[] = [];
const releases: Array<() => void> = [];

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = request.url ?? '/';
    received.push({
      method: request.method ?? '',
      url,
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
      remotePort: request.socket.remotePort ?? 0,
    });
    if (url === '/echo') {
      response.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-trace': 'abc' });
      response.end(JSON.stringify({ ok: true }));
    } else if (url === '/stream') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      releases.push(() => response.end('data: last\n\n'));
    } else if (url === '/hang') {
      releases.push(() => response.end());
    } else if (url === '/gzip') {
      response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
      response.end(gzipSync('squeezed text'));
    } else if (url === '/empty') {
      response.writeHead(204);
      response.end();
    } else if (url === '/moved') {
      response.writeHead(307, { location: '/echo' });
      response.end();
    } else if (url === '/see-other') {
      response.writeHead(303, { location: '/echo' });
      response.end();
    } else if (url === '/elsewhere') {
      response.writeHead(307, { location: `${otherOrigin}/echo` });
      response.end();
    } else {
      response.writeHead(404);
      response.end('no such route');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  otherOrigin = `http://localhost:${port}`;
});

afterAll(async () => {
  for (const release of releases.splice(0)) release();
  server.closeAllConnections();
  server.close();
});

function lastReceived(): Received {
  const last = received.at(-1);
  if (!last) throw new Error('the server received nothing');
  return last;
}

describe('clientFetch', () => {
  it('sends method, headers and body, and answers with status, headers and body as fetch does', async () => {
    const response = await clientFetch(`${base}/echo`, {
      method: 'post',
      headers: new Headers({ Authorization: 'Bearer secret', 'Content-Type': 'application/json' }),
      body: JSON.stringify({ text: 'héllo' }),
    });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.ok).toBe(true);
    expect(response.url).toBe(`${base}/echo`);
    expect(response.headers.get('x-trace')).toBe('abc');
    expect(await response.json()).toEqual({ ok: true });
    const request = lastReceived();
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBe('Bearer secret');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['content-length']).toBe(String(Buffer.byteLength('{"text":"héllo"}')));
    expect(request.body).toBe('{"text":"héllo"}');
  });

  it('gives form and text bodies the content type fetch gives them, and takes headers as a record or pairs', async () => {
    await clientFetch(`${base}/echo`, {
      method: 'POST',
      headers: [['X-One', '1']],
      body: new URLSearchParams({ channel: 'C1', text: 'a&b' }),
    });
    expect(lastReceived().headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(lastReceived().headers['x-one']).toBe('1');
    expect(lastReceived().body).toBe('channel=C1&text=a%26b');

    await clientFetch(`${base}/echo`, { method: 'POST', headers: { 'X-Two': '2' }, body: 'plain' });
    expect(lastReceived().headers['content-type']).toBe('text/plain;charset=UTF-8');
    expect(lastReceived().headers['x-two']).toBe('2');
  });

  it('keeps the connection alive between requests', async () => {
    await (await clientFetch(`${base}/echo`)).text();
    const first = lastReceived().remotePort;
    await (await clientFetch(`${base}/echo`)).text();
    expect(lastReceived().remotePort).toBe(first);
  });

  it('streams the body as it arrives', async () => {
    const response = await clientFetch(`${base}/stream`);
    const reader = response.body?.getReader();
    if (!reader) throw new Error('no body');
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    releases.shift()?.();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe('data: last\n\n');
  });

  it('rejects with the abort reason before the response, and errors the body after it', async () => {
    const before = new AbortController();
    const pending = clientFetch(`${base}/hang`, { signal: before.signal });
    await expect.poll(() => lastReceived().url).toBe('/hang');
    before.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    releases.shift()?.();

    const already = new AbortController();
    already.abort();
    await expect(clientFetch(`${base}/echo`, { signal: already.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });

    const during = new AbortController();
    const response = await clientFetch(`${base}/stream`, { signal: during.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    during.abort(new Error('caller gave up'));
    await expect(reader?.read()).rejects.toThrow('caller gave up');
    releases.shift()?.();
  });

  it('reports a connection failure as fetch does: a TypeError with the cause', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const failure = await clientFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect((failure as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('decodes a compressed body, and gives a 204 no body', async () => {
    expect(await (await clientFetch(`${base}/gzip`)).text()).toBe('squeezed text');
    const empty = await clientFetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('follows a redirect as fetch does, asking each server once', async () => {
    const before = received.length;
    const followed = await clientFetch(`${base}/moved`, { method: 'POST', body: 'again' });
    expect(followed.status).toBe(201);
    expect(received.slice(before).map((request) => [request.method, request.url, request.body])).toEqual([
      ['POST', '/moved', 'again'],
      ['POST', '/echo', 'again'],
    ]);

    const seeOther = received.length;
    await clientFetch(`${base}/see-other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(received.slice(seeOther).map((request) => [request.method, request.url, request.body])).toEqual([
      ['POST', '/see-other', '{}'],
      ['GET', '/echo', ''],
    ]);
    expect(lastReceived().headers['content-type']).toBeUndefined();
  });

  it('keeps credentials from another origin a redirect leads to', async () => {
    await clientFetch(`${base}/elsewhere`, { headers: { authorization: 'Bearer secret', 'x-keep': 'yes' } });
    expect(lastReceived().url).toBe('/echo');
    expect(lastReceived().headers.host).toBe(new URL(otherOrigin).host);
    expect(lastReceived().headers.authorization).toBeUndefined();
    expect(lastReceived().headers['x-keep']).toBe('yes');
  });

  it('refuses a redirect when asked to, sending nothing more, or hands it back', async () => {
    const before = received.length;
    const refused = await clientFetch(`${base}/moved`, {
      method: 'POST',
      body: 'once',
      redirect: 'error',
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(received.slice(before).map((request) => request.url)).toEqual(['/moved']);

    const manual = await clientFetch(`${base}/moved`, { redirect: 'manual' });
    expect(manual.status).toBe(307);
    expect(manual.headers.get('location')).toBe('/echo');
  });

  it('shares one abort signal among many requests without a listener warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const shared = new AbortController();
      await Promise.all(
        Array.from({ length: 20 }, async () =>
          (await clientFetch(`${base}/echo`, { signal: shared.signal })).text(),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('sends a multipart form through the global fetch', async () => {
    const form = new FormData();
    form.append('file', new Blob(['file contents']), 'notes.txt');
    const response = await clientFetch(`${base}/echo`, { method: 'POST', body: form });
    expect(response.status).toBe(201);
    expect(lastReceived().headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(lastReceived().body).toContain('file contents');
  });
});
