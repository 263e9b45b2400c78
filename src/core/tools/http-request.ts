import { ButlerError } from '../contracts/errors.js';

/** What an HTTP tool does with a redirect: refuse it, or follow it within the configured URL's origin. */
export type RedirectPolicy = 'refuse' | 'same-origin';

export type HttpToolErrorCode =
  /** The endpoint redirected and the tool's `redirects` policy did not allow following it. */
  | 'http_tool_redirect_refused'
  /** The endpoint answered with a status outside 200–299. */
  | 'http_tool_status';

/** A failed HTTP tool call; the message is what the model reads as the tool error. */
export class HttpToolError extends ButlerError {
  declare readonly code: HttpToolErrorCode;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 5;

function redirectTarget(location: string | null, base: URL): URL | undefined {
  if (location === null) return undefined;
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/**
 * Sends the request without letting fetch follow redirects: a followed redirect would carry the configured
 * headers (an `Authorization` among them) and the body wherever the endpoint points, and hand its answer to
 * the model. With `same-origin`, a redirect within the configured URL's origin is followed with the request
 * unchanged; since 301, 302 and 303 ask for a GET instead, only 307 and 308 are followed for other methods.
 */
export async function fetchWithinPolicy(
  url: URL,
  init: RequestInit & { method: string },
  policy: RedirectPolicy,
): Promise<Response> {
  let current = url;
  for (let hops = 0; ; hops++) {
    const response = await fetch(current, { ...init, redirect: 'manual' });
    if (!redirectStatuses.has(response.status)) return response;
    await response.body?.cancel();
    const target = redirectTarget(response.headers.get('location'), current);
    const refuse = (why: string) => {
      const where = target ? ` to ${target.host}` : ' without a usable Location';
      return new HttpToolError(
        'http_tool_redirect_refused',
        `the endpoint answered HTTP ${response.status} with a redirect${where}; ${why}. Nothing was read from it.`,
      );
    };
    if (policy === 'refuse') throw refuse('this tool follows no redirects');
    if (!target) throw refuse('it cannot be followed');
    if (target.origin !== url.origin) throw refuse(`this tool follows redirects only within ${url.origin}`);
    if (response.status !== 307 && response.status !== 308 && init.method !== 'GET')
      throw refuse(`following it would turn the ${init.method} into a GET`);
    if (hops === maxRedirects) throw refuse(`that is more than ${maxRedirects} redirects in a row`);
    current = target;
  }
}

/** Reads a body's bytes, at most `maxBytes` of them; past that the stream is cancelled and `cut` is set. */
export async function readCappedBytes(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let received = 0;
  const done = (cut: boolean) => ({ bytes: new Uint8Array(Buffer.concat(chunks, received)), cut });
  if (!body) return done(false);
  const reader = body.getReader();
  for (;;) {
    const { done: ended, value } = await reader.read();
    if (ended) return done(false);
    if (value.byteLength > maxBytes - received) {
      await reader.cancel();
      return done(true);
    }
    chunks.push(value);
    received += value.byteLength;
  }
}

/**
 * Reads a body as text, at most `maxBytes` of it: past that the stream is cancelled (which closes the
 * connection), so an endpoint that answers hundreds of megabytes costs no more than the cap.
 */
export async function readCappedText(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ text: string; cut: boolean }> {
  if (!body) return { text: '', cut: false };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), cut: false };
    const room = maxBytes - received;
    if (value.byteLength > room) {
      // Not flushed: a character split by the cut is dropped rather than shown as U+FFFD.
      text += decoder.decode(value.subarray(0, room), { stream: true });
      await reader.cancel();
      return { text, cut: true };
    }
    received += value.byteLength;
    text += decoder.decode(value, { stream: true });
  }
}
