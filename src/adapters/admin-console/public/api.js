// The console's client for Butler's HTTP API. The key travels in the Authorization header only (never in a
// URL), so EventSource, which cannot send headers, is out: streams are read with fetch and parsed here.

import { withTenant } from './tenants.js';

const base = new URL('../api/v1', document.baseURI).pathname;

/** A request the API refused or could not answer, with what it said. */
export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** What to show a person, plainly. */
  describe() {
    if (this.status === 401) return "The key was refused (401): it is not one of Butler's API keys.";
    if (this.status === 403) return `Not allowed for this key (403): ${this.message}`;
    if (this.status === 0) return `Butler cannot be reached: ${this.message}`;
    return `${this.message} (${this.status}${this.code ? ` ${this.code}` : ''})`;
  }
}

async function failureOf(response) {
  let body = {};
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  return new ApiFailure(response.status, body.error ?? '', body.message ?? response.statusText ?? 'failed');
}

export function createApi(key) {
  /** The tenant picked in the header ('' for all): approvals, conversations and usage are read for it only. */
  let tenant = '';
  async function send(path, { method = 'GET', body, headers = {}, signal } = {}) {
    let response;
    try {
      response = await fetch(`${base}${withTenant(path, tenant)}`, {
        method,
        signal,
        cache: 'no-store',
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      throw new ApiFailure(0, 'network', error.message);
    }
    if (!response.ok) throw await failureOf(response);
    return response;
  }

  return {
    pickTenant(value) {
      tenant = value;
    },
    /** A file Butler sent (`/api/v1/files/{id}`), as a Blob: the key goes in a header, so no plain link. */
    async blob(path, options) {
      return (await send(path, options)).blob();
    },
    /** JSON from the API; throws ApiFailure. */
    async json(path, options) {
      return (await send(path, options)).json();
    },
    /**
     * Opens a server-sent events response and calls `onEvent({ id, data })` for each event until the server
     * ends it or `options.signal` aborts; `options.onOpen()` once the server has accepted it. Resolves when
     * the stream ends.
     */
    async stream(path, onEvent, { onOpen, ...options } = {}) {
      const response = await send(path, options);
      onOpen?.();
      await readEvents(response, onEvent);
    },
    /**
     * What the key may do, and its name (the identity its decisions are taken as); `connections` when a server
     * wants OAuth (the API answers /connections only then).
     */
    async scopes() {
      const { name, scopes, tenants } = await (await send('/me')).json();
      const connections = await send('/connections').then(
        () => true,
        () => false,
      );
      return {
        name,
        read: scopes.includes('read'),
        chat: scopes.includes('chat'),
        approve: scopes.includes('approve'),
        connections,
        // A key limited to tenants reaches only what narrows to them (api-and-console.md).
        tenants,
      };
    },
  };
}

/** Server-sent events: blank-line separated blocks of `id:` and `data:` lines; `:` lines are comments. */
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const event = parseBlock(block);
      if (event) onEvent(event);
    }
  }
}

function parseBlock(block) {
  let id;
  const data = [];
  for (const raw of block.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  try {
    return { id, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}
