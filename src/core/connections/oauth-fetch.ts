import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/client';
import { ButlerError } from '../contracts/errors.js';
import { formatBytes } from '../text/index.js';
import { isInternalAddress, literalAddress } from './public-address.js';

/**
 * The fetch every OAuth request of Butler's goes through (discovery and its fallbacks, registration, token,
 * refresh, revocation): the parties it reaches are named by an MCP server Butler does not control, so
 * - each request has a deadline, headers and body together, and the caller may end a whole flow sooner;
 * - at most `maxResponseBytes` of an answer are read (a 300 MB metadata document costs nothing);
 * - an authorization server on a loopback, private, link-local or unique-local address is refused, checked on
 *   the address the socket connects to (a name that resolves elsewhere a second later gains nothing), unless the
 *   MCP server itself is on such an address (an operator's choice); `http:` only when the MCP server is `http:`
 *   on loopback.
 * Redirects of GET requests are followed (three at most), each target checked the same way.
 */

export interface OAuthFetchPolicy {
  /** The MCP server whose authorization this is. */
  serverUrl: string;
  requestDeadlineMs: number;
  maxResponseBytes: number;
  /** Resolves host names: `dns.lookup` unless given (tests name their own). */
  lookup?: LookupFunction;
}

export type OAuthRequestErrorCode = 'oauth_address_refused' | 'oauth_response_too_large' | 'oauth_deadline';

export class OAuthRequestError extends ButlerError {
  declare readonly code: OAuthRequestErrorCode;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 3;

/** A fetch under `policy`; `signal` ends every request it makes (the deadline of a whole Connect page). */
export function oauthFetch(policy: OAuthFetchPolicy, signal?: AbortSignal): FetchLike {
  const resolve = policy.lookup ?? (dnsLookup as LookupFunction);
  const server = new URL(policy.serverUrl);
  let serverInternal: Promise<boolean> | undefined;
  const isServerInternal = () => {
    serverInternal ??= addressesOf(resolve, server.hostname).then(
      (addresses) => addresses.some(isInternalAddress),
      () => false,
    );
    return serverInternal;
  };

  return async (input, init = {}) => {
    const signals = [AbortSignal.timeout(policy.requestDeadlineMs), signal, init.signal ?? undefined];
    const deadline = AbortSignal.any(signals.filter((each): each is AbortSignal => each !== undefined));
    const internalAllowed = await isServerInternal();
    let url = new URL(String(input));
    for (let hop = 0; ; hop++) {
      checkProtocol(url, server);
      const literal = literalAddress(url.hostname);
      if (literal && !internalAllowed && isInternalAddress(literal)) throw refused(url);
      const response = await send(url, init, deadline, {
        lookup: guardedLookup(resolve, url, internalAllowed),
        maxBytes: policy.maxResponseBytes,
        deadlineMs: policy.requestDeadlineMs,
      });
      const location = response.headers.get('location');
      const method = (init.method ?? 'GET').toUpperCase();
      if (!redirectStatuses.has(response.status) || !location || method !== 'GET' || hop === maxRedirects)
        return response;
      await response.body?.cancel();
      url = new URL(location, url);
    }
  };
}

const refused = (url: URL) =>
  new OAuthRequestError(
    'oauth_address_refused',
    `${url.host} is on an internal network address, and the MCP server that named it is not: Butler does not send it requests`,
  );

function checkProtocol(url: URL, server: URL): void {
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && server.protocol === 'http:' && isLoopback(server.hostname)) return;
  throw new OAuthRequestError(
    'oauth_address_refused',
    `${url.origin} is not https: Butler sends OAuth requests over plain http only to an MCP server on loopback`,
  );
}

function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const address = literalAddress(hostname) ?? '';
  return address === '::1' || address.startsWith('127.');
}

function addressesOf(resolve: LookupFunction, hostname: string): Promise<string[]> {
  const literal = literalAddress(hostname);
  if (literal) return Promise.resolve([literal]);
  return new Promise((done, fail) =>
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error) fail(error);
      else
        done(
          (Array.isArray(addresses) ? addresses : [{ address: addresses } as LookupAddress]).map(
            (entry) => entry.address,
          ),
        );
    }),
  );
}

/** The resolver the socket connects with: it refuses a name that resolves to an internal address. */
function guardedLookup(resolve: LookupFunction, url: URL, internalAllowed: boolean): LookupFunction {
  return (hostname, options, callback) =>
    resolve(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = Array.isArray(found) ? found : [];
      if (!internalAllowed && addresses.some((entry) => isInternalAddress(entry.address)))
        return callback(refused(url), '', 0);
      if (options.all) return (callback as (error: null, all: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
}

function requestBody(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('an OAuth request body is text or form fields');
}

function send(
  url: URL,
  init: RequestInit,
  deadline: AbortSignal,
  options: { lookup: LookupFunction; maxBytes: number; deadlineMs: number },
): Promise<Response> {
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  const body = requestBody(init.body);
  if (body !== undefined) {
    headers['content-length'] = String(Buffer.byteLength(body));
    if (init.body instanceof URLSearchParams && !headers['content-type'])
      headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  }
  const late = () =>
    new OAuthRequestError(
      'oauth_deadline',
      `${url.host} did not answer in time (a deadline of ${options.deadlineMs / 1000} s a request)`,
    );
  if (deadline.aborted) return Promise.reject(late());
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, {
      method: (init.method ?? 'GET').toUpperCase(),
      headers,
      lookup: options.lookup,
      agent: false,
    });
    let incoming: http.IncomingMessage | undefined;
    // Before the answer the request fails with the reason; after it, the body stream does.
    const abort = () => (incoming ?? request).destroy(late());
    deadline.addEventListener('abort', abort, { once: true });
    request.on('error', (error) => {
      deadline.removeEventListener('abort', abort);
      reject(error);
    });
    request.on('response', (answer) => {
      incoming = answer;
      const length = Number(answer.headers['content-length'] ?? 0);
      if (length > options.maxBytes) {
        request.destroy();
        reject(tooLarge(url, options.maxBytes));
        return;
      }
      const responseHeaders = new Headers();
      for (let index = 0; index + 1 < answer.rawHeaders.length; index += 2)
        responseHeaders.append(answer.rawHeaders[index] ?? '', answer.rawHeaders[index + 1] ?? '');
      const status = answer.statusCode ?? 0;
      const empty = status === 204 || status === 304 || init.method === 'HEAD';
      resolve(
        new Response(empty ? null : cappedBody(answer, url, options.maxBytes), {
          status,
          statusText: incoming.statusMessage ?? '',
          headers: responseHeaders,
        }),
      );
      answer.on('close', () => deadline.removeEventListener('abort', abort));
    });
    request.end(body);
  });
}

const tooLarge = (url: URL, maxBytes: number) =>
  new OAuthRequestError(
    'oauth_response_too_large',
    `the answer of ${url.host} was larger than ${formatBytes(maxBytes)}; Butler stopped reading it`,
  );

/** The body as a web stream that errors once more than `maxBytes` arrived (and closes the socket). */
function cappedBody(incoming: http.IncomingMessage, url: URL, maxBytes: number): ReadableStream<Uint8Array> {
  let received = 0;
  let ended = false;
  return new ReadableStream({
    start(controller) {
      const fail = (error: Error) => {
        if (ended) return;
        ended = true;
        controller.error(error);
      };
      incoming.on('data', (chunk: Buffer) => {
        if (ended) return;
        received += chunk.byteLength;
        if (received > maxBytes) {
          fail(tooLarge(url, maxBytes));
          incoming.destroy();
          return;
        }
        controller.enqueue(new Uint8Array(chunk));
      });
      incoming.on('end', () => {
        if (ended) return;
        ended = true;
        controller.close();
      });
      incoming.on('error', fail);
      incoming.on('close', () => fail(new Error(`the answer of ${url.host} ended early`)));
    },
    cancel() {
      ended = true;
      incoming.destroy();
    },
  });
}
