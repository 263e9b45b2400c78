import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export type ScriptedReply =
  | {
      text: string;
      chunks?: string[];
      chunkDelayMs?: number;
      usage?: { promptTokens: number; completionTokens: number };
      /** Response headers beside the stream's own (a provider's `x-ratelimit-*`). */
      headers?: Record<string, string>;
    }
  | {
      toolCalls: Array<{ id?: string; name: string; arguments: string }>;
      text?: string;
      chunkDelayMs?: number;
    }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true }
  | { streamThenFail: string }
  | { rawSse: string[] };

export type ReplyScript =
  | ScriptedReply
  | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface RecordedRequest {
  model: string;
  messages: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>>;
  stream: boolean;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  receivedAt: number;
  /** When the answer's last byte was written (benchmarks: last token → final platform update). */
  answeredAt?: number;
}

export interface FakeModelServer {
  baseUrl: string;
  requests: RecordedRequest[];
  enqueue(...replies: ReplyScript[]): void;
  /**
   * Replies for the requests `match` picks, in order, ahead of the shared queue: scripts for callers that
   * run at the same time (sub-agents in parallel), whose requests arrive in no fixed order.
   */
  enqueueFor(match: (request: RecordedRequest) => boolean, ...replies: ReplyScript[]): void;
  setFallback(reply: ReplyScript): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

type CompletionReply = Extract<ScriptedReply, { text: string } | { toolCalls: unknown }>;
type ErrorReply = Extract<ScriptedReply, { status: number }>;

interface Completion {
  id: string;
  model: string;
  text: string;
  chunks: string[] | undefined;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  chunkDelayMs: number;
  headers: Record<string, string> | undefined;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const defaultFallback: ScriptedReply = { text: 'ok' };

export async function startFakeModelServer(options: { port?: number } = {}): Promise<FakeModelServer> {
  const queue: ReplyScript[] = [];
  const routed: Array<{ match: (request: RecordedRequest) => boolean; replies: ReplyScript[] }> = [];
  const requests: RecordedRequest[] = [];
  let fallback: ReplyScript = defaultFallback;
  let completionCount = 0;

  async function answerChatCompletion(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = parseJsonObject(await readBody(request));
    // A client that gave up before its request was read (a deadline, on a loaded machine) takes no reply from the
    // script: it would be the next test's.
    if (request.socket.destroyed) return;
    if (!body) return sendError(response, { status: 400 }, 'Body must be a JSON object');
    const recorded: RecordedRequest = {
      model: typeof body.model === 'string' ? body.model : '',
      messages: recordsIn(body.messages),
      ...(Array.isArray(body.tools) ? { tools: recordsIn(body.tools) } : {}),
      stream: body.stream === true,
      body,
      headers: { ...request.headers },
      receivedAt: Date.now(),
    };
    requests.push(recorded);

    const script =
      routed.find((entry) => entry.replies.length > 0 && entry.match(recorded))?.replies.shift() ??
      queue.shift() ??
      fallback;
    let reply: ScriptedReply;
    try {
      reply = typeof script === 'function' ? await script(recorded) : script;
    } catch (error) {
      // A throwing script is a test bug; show it to the client rather than crash the server.
      return sendError(response, { status: 500 }, `Reply script threw: ${String(error)}`);
    }

    if ('status' in reply) return sendError(response, reply);
    if ('hang' in reply) return;
    if ('rawSse' in reply) return sendRawSse(response, reply.rawSse);
    const completion = toCompletion(
      'streamThenFail' in reply ? { text: reply.streamThenFail } : reply,
      recorded,
      ++completionCount,
    );
    if ('streamThenFail' in reply) return streamThenFail(response, completion);
    if (!recorded.stream) return sendJson(response, 200, completionBody(completion));
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    await streamCompletion(response, completion, includeUsage);
    recorded.answeredAt = Date.now();
  }

  const server = createServer((request, response) => {
    // Tests abort requests on purpose (timeouts, user aborts); a dead socket is not a server failure.
    request.on('error', () => {});
    response.on('error', () => {});
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (request.method === 'POST' && path === '/v1/chat/completions') {
      answerChatCompletion(request, response).catch(() => response.destroy());
    } else if (request.method === 'GET' && path === '/v1/models') {
      const model = { id: 'fake-model', object: 'model', created: 0, owned_by: 'fake-model-server' };
      sendJson(response, 200, { object: 'list', data: [model] });
    } else {
      sendError(response, { status: 404 }, `No route for ${request.method} ${path}`);
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    enqueueFor: (match, ...replies) => {
      routed.push({ match, replies });
    },
    setFallback: (reply) => {
      fallback = reply;
    },
    waitForRequests: async (count, timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`Expected ${count} model requests within ${timeoutMs}ms, got ${requests.length}`);
        }
        await delay(5);
      }
    },
    reset: () => {
      queue.length = 0;
      routed.length = 0;
      requests.length = 0;
      fallback = defaultFallback;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hung requests would otherwise keep close() waiting forever.
        server.closeAllConnections();
      }),
  };
}

function toCompletion(reply: CompletionReply, request: RecordedRequest, count: number): Completion {
  const toolCalls = ('toolCalls' in reply ? reply.toolCalls : []).map((call, index) => ({
    ...call,
    id: call.id ?? `call_fake_${count}_${index}`,
  }));
  const text = reply.text ?? '';
  const outputCharacters = text.length + toolCalls.map((call) => call.name + call.arguments).join('').length;
  const scriptedUsage = 'usage' in reply ? reply.usage : undefined;
  const promptTokens = scriptedUsage?.promptTokens ?? Math.ceil(promptCharacters(request.messages) / 4);
  const completionTokens = scriptedUsage?.completionTokens ?? Math.ceil(outputCharacters / 4);
  return {
    id: `chatcmpl-fake-${count}`,
    model: request.model,
    text,
    chunks: 'chunks' in reply ? reply.chunks : undefined,
    toolCalls,
    chunkDelayMs: reply.chunkDelayMs ?? 0,
    headers: 'headers' in reply ? reply.headers : undefined,
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function promptCharacters(messages: Array<Record<string, unknown>>): number {
  let total = 0;
  for (const { content } of messages) {
    if (typeof content === 'string') total += content.length;
    for (const part of recordsIn(content)) if (typeof part.text === 'string') total += part.text.length;
  }
  return total;
}

function chunkEvent(
  completion: Completion,
  delta: Record<string, unknown>,
  finishReason: string | null = null,
) {
  return {
    id: completion.id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: completion.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function textEvents(completion: Completion): unknown[] {
  const hasToolCalls = completion.toolCalls.length > 0;
  const pieces = completion.chunks ?? completion.text.match(/(?:\s*\S+){1,3}\s*/g) ?? [];
  return [
    chunkEvent(completion, { role: 'assistant', content: hasToolCalls ? null : '' }),
    ...pieces.map((content) => chunkEvent(completion, { content })),
  ];
}

async function streamCompletion(response: ServerResponse, completion: Completion, includeUsage: boolean) {
  const events = textEvents(completion);
  completion.toolCalls.forEach((call, index) => {
    const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    events.push(chunkEvent(completion, { tool_calls: [opening] }));
    for (const fragment of call.arguments.match(/[\s\S]{1,8}/g) ?? []) {
      events.push(chunkEvent(completion, { tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });
  events.push(chunkEvent(completion, {}, completion.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage) events.push({ ...chunkEvent(completion, {}), choices: [], usage: completion.usage });

  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...completion.headers,
  });
  for (const [index, event] of events.entries()) {
    if (index > 0 && completion.chunkDelayMs > 0) await delay(completion.chunkDelayMs);
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  response.end('data: [DONE]\n\n');
}

async function streamThenFail(response: ServerResponse, completion: Completion): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of textEvents(completion)) response.write(`data: ${JSON.stringify(event)}\n\n`);
  // Let the partial stream reach the client before the connection dies.
  await delay(20);
  response.destroy();
}

function completionBody(completion: Completion): Record<string, unknown> {
  const hasToolCalls = completion.toolCalls.length > 0;
  const toolCalls = completion.toolCalls.map(({ id, name, arguments: args }) => ({
    id,
    type: 'function',
    function: { name, arguments: args },
  }));
  const message = {
    role: 'assistant',
    content: hasToolCalls && completion.text === '' ? null : completion.text,
    refusal: null,
    ...(hasToolCalls ? { tool_calls: toolCalls } : {}),
  };
  return {
    id: completion.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: completion.model,
    choices: [{ index: 0, message, finish_reason: hasToolCalls ? 'tool_calls' : 'stop', logprobs: null }],
    usage: completion.usage,
  };
}

function sendRawSse(response: ServerResponse, payloads: string[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(payloads.map((payload) => `data: ${payload}\n\n`).join(''));
}

function sendError(response: ServerResponse, reply: ErrorReply, message = `Scripted ${reply.status} error`) {
  const type =
    reply.status === 429 ? 'requests' : reply.status >= 500 ? 'server_error' : 'invalid_request_error';
  const code = reply.status === 429 ? 'rate_limit_exceeded' : null;
  const body = reply.body ?? { error: { message, type, param: null, code } };
  sendJson(response, reply.status, body, reply.headers);
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  response.end(payload);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseJsonObject(json: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(json);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function recordsIn(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parts of a request's user messages (a string content is one text part), in order. */
export function userParts(
  request: RecordedRequest,
): Array<{ type: 'text'; text: string } | { type: 'image_url'; url: string }> {
  return request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => {
      const { content } = message;
      if (typeof content === 'string') return [{ type: 'text' as const, text: content }];
      return (content as Array<Record<string, unknown>>).map((part) =>
        part.type === 'image_url'
          ? { type: 'image_url' as const, url: String((part.image_url as { url: string }).url) }
          : { type: 'text' as const, text: String(part.text) },
      );
    });
}
