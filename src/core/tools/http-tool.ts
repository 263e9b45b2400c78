import { createHash } from 'node:crypto';
import { z } from 'zod';
import { onPlatform, type Person } from '../contracts/events.js';
import { truncateText } from '../text/index.js';
import { checkArguments } from './define-tool.js';
import { responseFile } from './http-file.js';
import {
  fetchWithinPolicy,
  HttpToolError,
  type RedirectPolicy,
  readCappedBytes,
  readCappedText,
} from './http-request.js';
import type { ArgumentsCheck, JsonSchema, Risk, Tool, ToolConnection } from './tool.js';

/** A tool defined in the config file that calls an HTTP endpoint with the validated arguments. */
export interface HttpToolDefinition {
  name: string;
  description: string;
  risk: Risk;
  /** A JSON Schema of `type: object`; its `properties` are the only arguments the tool sends. */
  input: JsonSchema;
  http: {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    url: string;
    headers: Record<string, string>;
    timeoutMs: number;
    maxResponseChars: number;
    /** Past this many bytes the response is no longer read. */
    maxResponseBytes: number;
    /** A file answer (an image, a PDF, an attachment) larger than this is refused. */
    maxFileBytes: number;
    redirects: RedirectPolicy;
    /** Calls carry the bearer token of a connection to this OAuth server (`mcpServers[].oauth`). */
    auth?: { connection: string } | undefined;
  };
}

/**
 * Access tokens of people's connections (`core/connections`), for HTTP tools that act with one. A call only
 * gets here once its connection is ready (the turn parked until it was).
 */
export interface BearerTokens {
  identityOf(server: string): ToolConnection['identity'] | undefined;
  /** The access token of `as`'s connection (refreshed when due), with its version; undefined: none. */
  token(server: string, as: Person): Promise<{ token: string; version: number } | undefined>;
  /** The server refused the token of `version`: true once refreshed (by this call or another), false: gone. */
  rejected(server: string, as: Person, version: number): Promise<boolean>;
}

/** Same key for the same tool call however often it is retried, so the endpoint can deduplicate. */
export function idempotencyKey(conversationKey: string, callId: string): string {
  return createHash('sha256').update(`${conversationKey}\n${callId}`).digest('hex').slice(0, 32);
}

function describeArguments(input: unknown): string {
  if (input && typeof input === 'object') {
    const parts = Object.entries(input).map(
      ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
    );
    if (parts.length > 0) return truncateText(parts.join(', '), 200);
  }
  return 'no arguments';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const names = (keys: readonly string[]) => keys.map((key) => JSON.stringify(key)).join(', ');

/**
 * The admin's limits on what a call may send, checked before anything runs so that a refused call is
 * audited as invalid: only the declared properties, and (for GET and DELETE, whose arguments become query
 * parameters) none that would replace a query parameter fixed in the configured URL.
 */
function checkAllowed(
  raw: unknown,
  declared: readonly string[],
  fixedQuery: ReadonlySet<string>,
): ArgumentsCheck<never> | undefined {
  if (!isRecord(raw)) return undefined;
  const keys = Object.keys(raw);
  const undeclared = keys.filter((key) => !declared.includes(key));
  if (undeclared.length > 0) {
    const allowed = declared.length > 0 ? `only ${names(declared)}` : 'no arguments';
    return {
      ok: false,
      error: `${names(undeclared)} ${undeclared.length === 1 ? 'is' : 'are'} not declared by this tool, which takes ${allowed}; nothing was sent.`,
    };
  }
  // Case-folded: some servers read query parameter names without regard to case.
  const fixed = keys.filter((key) => fixedQuery.has(key.toLowerCase()));
  if (fixed.length > 0) {
    return {
      ok: false,
      error: `the query parameter ${names(fixed)} is fixed by this tool's configuration and cannot be set; nothing was sent.`,
    };
  }
  return undefined;
}

export function createHttpTool(
  definition: HttpToolDefinition,
  bearer?: BearerTokens,
): Tool<Record<string, unknown>> {
  const { http } = definition;
  const server = http.auth?.connection;
  const identity = server === undefined ? undefined : bearer?.identityOf(server);
  if (server !== undefined && (!bearer || !identity))
    throw new Error(
      `the tool ${definition.name} uses the connection ${server}, which is not an OAuth server`,
    );
  const hasBody = http.method !== 'GET' && http.method !== 'DELETE';
  const declared = Object.keys(isRecord(definition.input.properties) ? definition.input.properties : {});
  const fixedQuery = new Set(
    hasBody ? [] : [...new URL(http.url).searchParams.keys()].map((key) => key.toLowerCase()),
  );
  // Closed, so the model is told no other property is taken (the config refuses any other setting).
  const parameters: JsonSchema = { ...definition.input, additionalProperties: false };
  const schema = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<
    Record<string, unknown>
  >;
  return {
    name: definition.name,
    description: definition.description,
    risk: definition.risk,
    ...(server && identity ? { connection: { server, identity } } : {}),
    parameters,
    parse: (raw) => checkAllowed(raw, declared, fixedQuery) ?? checkArguments(schema, raw),
    summarize: (input) => `${definition.description.replace(/\.$/, '')} (${describeArguments(input)})`,
    async execute(input, context) {
      const url = new URL(http.url);
      if (!hasBody) {
        for (const [key, value] of Object.entries(input)) {
          url.searchParams.append(key, typeof value === 'string' ? value : JSON.stringify(value));
        }
      }
      // Arguments never become headers: these are the configured ones and Butler's own.
      const send = (authorization: Record<string, string>) =>
        fetchWithinPolicy(
          url,
          {
            method: http.method,
            headers: {
              ...http.headers,
              ...authorization,
              'idempotency-key': idempotencyKey(context.conversationKey, context.callId),
              ...(hasBody ? { 'content-type': 'application/json' } : {}),
            },
            ...(hasBody ? { body: JSON.stringify(input) } : {}),
            signal: AbortSignal.any([context.signal, AbortSignal.timeout(http.timeoutMs)]),
          },
          http.redirects,
        );
      const response =
        server && bearer
          ? await sendAs(bearer, server, onPlatform(context.requester, context.address.platform), send)
          : await send({});
      const file = response.ok ? responseFile(response.headers, url, definition.name) : undefined;
      if (file) {
        const { bytes, cut } = await readCappedBytes(response.body, http.maxFileBytes);
        if (cut)
          throw new HttpToolError(
            'http_tool_file_too_large',
            `the answer is a file (${file.mimeType}) larger than ${http.maxFileBytes} bytes; Butler did not send it`,
          );
        return { text: `HTTP ${response.status}: the answer is a file.`, files: [{ ...file, bytes }] };
      }
      const { text, cut } = await readCappedText(response.body, http.maxResponseBytes);
      const shown =
        truncateText(text, http.maxResponseChars) +
        (cut
          ? `\n[cut: the answer was longer than ${http.maxResponseBytes} bytes; Butler stopped reading it there]`
          : '');
      if (!response.ok)
        throw new HttpToolError(
          'http_tool_status',
          `HTTP ${response.status} ${response.statusText}: ${shown}`,
        );
      return shown || `HTTP ${response.status} (empty body)`;
    },
  };
}

/** Sends with `as`'s bearer token; after a 401, once more with the refreshed one. */
async function sendAs(
  bearer: BearerTokens,
  server: string,
  as: Person,
  send: (authorization: Record<string, string>) => Promise<Response>,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const token = await bearer.token(server, as);
    if (!token)
      throw new HttpToolError(
        'http_tool_status',
        `the connection to ${server} is not there (or has lapsed); ask again to connect it`,
      );
    const response = await send({ authorization: `Bearer ${token.token}` });
    if (response.status !== 401 || attempt > 0) return response;
    await response.body?.cancel();
    if (!(await bearer.rejected(server, as, token.version)))
      throw new HttpToolError(
        'http_tool_status',
        `${server} refused the connection, which has lapsed; ask again to connect it`,
      );
  }
}
