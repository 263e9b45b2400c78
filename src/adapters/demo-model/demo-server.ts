import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../core/contracts/logger.js';
import { readBody } from '../../http/body.js';
import { demoReply } from './demo-script.js';

/**
 * The demo model (`BUTLER_MODEL=demo`): an OpenAI-compatible chat completions endpoint on 127.0.0.1 that
 * streams the script's answers. Butler reaches it through the `openai` SDK like any other model, so nothing
 * in the core knows it is a demo. It listens on loopback only, on a port of its own choosing.
 */

export interface DemoModel {
  /** The endpoint's base URL, for the model client (`…/v1`). */
  baseUrl: string;
  close(): Promise<void>;
}

/** Words a chunk, so the reply streams as a model's would. */
const chunkDelayMs = 25;
const maxRequestBytes = 16 * 1_048_576;

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions'))
    return send(response, 404, {
      error: { message: 'the demo model serves POST /v1/chat/completions only' },
    });
  const raw = await readBody(request, maxRequestBytes);
  const body = JSON.parse(raw.toString('utf8')) as {
    model?: string;
    messages?: Array<{ role: string; content?: unknown }>;
    tools?: Array<{ function?: { name?: string; parameters?: { required?: unknown } } }>;
    stream?: boolean;
  };
  if (!body.stream) return send(response, 400, { error: { message: 'the demo model only streams' } });
  const tools = (body.tools ?? []).flatMap(({ function: tool }) => {
    const required = tool?.parameters?.required;
    return tool?.name
      ? [{ name: tool.name, needsArguments: Array.isArray(required) && required.length > 0 }]
      : [];
  });
  const reply = demoReply(body.messages ?? [], tools);
  const id = `chatcmpl-demo-${randomUUID()}`;
  const model = body.model ?? 'demo';
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: unknown[] = [];
  if ('text' in reply) {
    events.push(chunk({ role: 'assistant', content: '' }));
    for (const piece of reply.text.match(/\s*\S+\s*/g) ?? []) events.push(chunk({ content: piece }));
    events.push(chunk({}, 'stop'));
  } else {
    const call = { index: 0, id: `call_demo_${randomUUID()}`, type: 'function', function: reply.toolCall };
    events.push(chunk({ role: 'assistant', content: null, tool_calls: [call] }), chunk({}, 'tool_calls'));
  }
  const prompt = Math.ceil(raw.length / 4);
  const completion = Math.ceil(JSON.stringify(reply).length / 4);
  events.push({
    ...chunk({}),
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  });
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(event)}\n\n`);
    await delay(chunkDelayMs);
  }
  response.end('data: [DONE]\n\n');
}

export async function startDemoModel(logger: Logger): Promise<DemoModel> {
  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      logger.warn({ err: error }, 'the demo model could not answer');
      if (!response.headersSent)
        send(response, 400, { error: { message: 'the demo model could not read that' } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
