import { defaultMaxListeners, getMaxListeners, setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * `fetch` for the HTTP clients on a turn's path: the `openai` SDK and Slack's Web API client, four to
 * six calls a turn. Node 20's own fetch (undici) spends about twice the CPU of `node:http` on a small
 * request (Request and Headers objects, a web-stream request body, a WebAssembly HTTP parser), and
 * those calls were the largest share of Butler's CPU per turn; this one sends with Node's HTTP client
 * over keep-alive agents and answers with a standard `Response` whose body streams.
 *
 * It covers what those clients send: a text, bytes or URLSearchParams body, a method, headers and an
 * abort signal. Everything else goes to the global fetch, which implements the whole standard: a
 * Request object, a FormData, Blob or stream body (Slack's file uploads), and the request a redirect
 * leads to.
 */

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

/** Statuses whose response has no body (the Response constructor refuses one). */
const nullBodyStatuses = new Set([101, 204, 205, 304]);
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * An idle kept-alive socket closes after this long: under the 5 s that Node servers, and most proxies
 * or more, keep an idle connection, so a request seldom goes out on a socket the server is closing.
 */
const idleSocketMs = 4_000;

const agents: Record<string, http.Agent> = {
  'http:': new http.Agent({ keepAlive: true, timeout: idleSocketMs }),
  'https:': new https.Agent({ keepAlive: true, timeout: idleSocketMs }),
};

const unsupported = Symbol('unsupported body');

/** The body as text or bytes, or `unsupported` for the kinds only the global fetch sends. */
function simpleBody(body: FetchInit['body']): string | Uint8Array | undefined | typeof unsupported {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  return unsupported;
}

/** The content type fetch gives a body sent without one. */
function defaultContentType(body: FetchInit['body']): string | undefined {
  if (typeof body === 'string') return 'text/plain;charset=UTF-8';
  if (body instanceof URLSearchParams) return 'application/x-www-form-urlencoded;charset=UTF-8';
  return undefined;
}

function headerRecord(init: FetchInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  const add = (value: string, name: string) => {
    const key = name.toLowerCase();
    record[key] = key in record ? `${record[key]}, ${value}` : value;
  };
  if (init instanceof Headers) init.forEach(add);
  else if (Array.isArray(init)) for (const [name, value] of init) add(String(value), String(name));
  else if (init) for (const [name, value] of Object.entries(init)) add(String(value), name);
  return record;
}

/** As fetch does: lenient about a stream that ends without its final block. */
const lenient = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const decoders: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(lenient),
  'x-gzip': () => zlib.createGunzip(lenient),
  deflate: () => zlib.createInflate(lenient),
  br: () => zlib.createBrotliDecompress(),
};

function decompressed(incoming: http.IncomingMessage, encoding: string | null): Readable {
  const decoder = encoding ? decoders[encoding.trim().toLowerCase()]?.() : undefined;
  // pipeline destroys both with the error when either fails; the body stream reports it.
  return decoder ? pipeline(incoming, decoder, () => {}) : incoming;
}

/** What fetch rejects with when the request could not be made or answered. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function toResponse(incoming: http.IncomingMessage, method: string, url: URL): Response {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.append(raw[index] ?? '', raw[index + 1] ?? '');
  const status = incoming.statusCode ?? 0;
  const empty = method === 'HEAD' || nullBodyStatuses.has(status);
  if (empty) incoming.resume();
  const body = empty
    ? null
    : (Readable.toWeb(decompressed(incoming, headers.get('content-encoding'))) as ReadableStream<Uint8Array>);
  const response = new Response(body, { status, statusText: incoming.statusMessage ?? '', headers });
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** Where a redirect leads, to be followed by the global fetch. */
interface Redirect {
  status: number;
  location: URL;
}

/** The request a redirect leads to, by the fetch standard's rules (it follows any further ones itself). */
function redirectedInit(redirect: Redirect, from: URL, init: FetchInit): FetchInit {
  const method = (init.method ?? 'GET').toUpperCase();
  const asGet =
    (redirect.status === 303 && method !== 'HEAD') ||
    ((redirect.status === 301 || redirect.status === 302) && method === 'POST');
  const headers = new Headers(init.headers);
  if (asGet) {
    for (const name of [
      'content-type',
      'content-length',
      'content-encoding',
      'content-language',
      'content-location',
    ])
      headers.delete(name);
  }
  if (redirect.location.origin !== from.origin) {
    for (const name of ['authorization', 'proxy-authorization', 'cookie']) headers.delete(name);
  }
  return { ...init, headers, ...(asGet ? { method: 'GET', body: null } : {}) };
}

/** The response, or where a redirect the caller wants followed leads. */
function send(
  url: URL,
  init: FetchInit,
  body: string | Uint8Array | undefined,
): Promise<Response | Redirect> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  // As fetch does: many requests may share one signal (a turn's, say) without a leak warning.
  if (signal && getMaxListeners(signal) === defaultMaxListeners) setMaxListeners(1500, signal);
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = headerRecord(init.headers);
  if (body !== undefined) {
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    const contentType = defaultContentType(init.body);
    if (contentType && !headers['content-type']) headers['content-type'] = contentType;
  }
  const transport = url.protocol === 'https:' ? https : http;

  return new Promise((resolve, reject) => {
    let incoming: http.IncomingMessage | undefined;
    const request = transport.request(url, { method, headers, agent: agents[url.protocol] });
    // Before the response the request fails with the reason; after it, the body stream does.
    const abort = () => {
      incoming?.destroy(signal?.reason);
      request.destroy(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
    const forget = () => signal?.removeEventListener('abort', abort);

    request.on('error', (error) => {
      forget();
      reject(signal?.aborted ? signal.reason : fetchFailed(error));
    });
    request.on('response', (response) => {
      incoming = response;
      const status = response.statusCode ?? 0;
      const location = redirectStatuses.has(status) ? response.headers.location : undefined;
      if (location && init.redirect !== 'manual') {
        forget();
        response.resume();
        if (init.redirect === 'error') {
          reject(fetchFailed(new Error(`unexpected redirect (${status})`)));
        } else {
          try {
            resolve({ status, location: new URL(location, url) });
          } catch (error) {
            reject(fetchFailed(error));
          }
        }
        return;
      }
      response.once('close', forget);
      try {
        resolve(toResponse(response, method, url));
      } catch (error) {
        // A status or status text the Response constructor refuses (a status over 599, say).
        response.destroy();
        reject(fetchFailed(error));
      }
    });
    request.end(body);
  });
}

/** Drop-in `fetch` for SDK clients (`new OpenAI({ fetch })`, `new WebClient(token, { fetch })`). */
export const clientFetch: typeof fetch = async (input: FetchInput, init: FetchInit = {}) => {
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
  const body = simpleBody(init.body);
  if (!url || !(url.protocol in agents) || body === unsupported) return fetch(input, init);
  const answer = await send(url, init, body);
  return answer instanceof Response ? answer : fetch(answer.location, redirectedInit(answer, url, init));
};
