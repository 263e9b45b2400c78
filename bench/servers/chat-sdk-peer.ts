import { createServer, type IncomingMessage } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { createSlackAdapter } from '@chat-adapter/slack';
import { createMemoryState } from '@chat-adapter/state-memory';
import { streamText } from 'ai';
import { type Adapter, Chat } from 'chat';

/**
 * The peer: the closest TypeScript bot doing Butler's basic work, written as the Chat SDK's and the AI
 * SDK's docs start one. Chat SDK with its Slack adapter and in-memory state; on a new mention it
 * subscribes to the thread and streams the model's reply into it (`thread.post(result.fullStream)`;
 * the Slack adapter uses chat.startStream/appendStream/stopStream). It stores nothing durable.
 * The adapter's `apiUrl` points it at the fake Slack API; `createOpenAI({ baseURL })` at the fake model
 * (chat completions, which the fake speaks). The webhook is served over node:http, as bare-bolt's is.
 *
 * Environment: PORT, SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, SLACK_API_URL, MODEL_BASE_URL.
 */

const openai = createOpenAI({
  baseURL: process.env.MODEL_BASE_URL ?? 'http://127.0.0.1:9/v1',
  apiKey: 'bench',
});

const slack = createSlackAdapter({
  botToken: process.env.SLACK_BOT_TOKEN ?? '',
  signingSecret: process.env.SLACK_SIGNING_SECRET ?? '',
  // Known, as Bolt's botUserId is in bare-bolt: no auth.test at start.
  botUserId: 'U0BUTLER',
  apiUrl: process.env.SLACK_API_URL ?? 'http://127.0.0.1:9/api/',
});

const bot = new Chat({
  userName: 'butler-peer',
  // Its `botUserId` getter is `string | undefined` where Adapter declares `botUserId?: string`, which our
  // exactOptionalPropertyTypes rejects; the value is the same at run time.
  adapters: { slack: slack as Adapter },
  state: createMemoryState(),
});

bot.onNewMention(async (thread, message) => {
  await thread.subscribe();
  const result = streamText({
    model: openai.chat('bench-model'),
    prompt: message.text,
    abortSignal: thread.signal,
  });
  await thread.post(result.fullStream);
});

/** The raw body and headers as a fetch Request: the adapter verifies the signature over the exact bytes. */
async function toRequest(incoming: IncomingMessage): Promise<Request> {
  const parts: Buffer[] = [];
  for await (const part of incoming) parts.push(part as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return new Request(`http://${incoming.headers.host ?? 'localhost'}${incoming.url ?? '/'}`, {
    method: incoming.method ?? 'POST',
    headers,
    body: Buffer.concat(parts),
  });
}

const server = createServer((incoming, outgoing) => {
  if (incoming.method === 'GET' && incoming.url === '/healthz') {
    outgoing.writeHead(200);
    outgoing.end('ok');
    return;
  }
  if (incoming.method !== 'POST' || incoming.url !== '/slack/events') {
    outgoing.writeHead(404);
    outgoing.end();
    return;
  }
  toRequest(incoming)
    // A long-lived server has no waitUntil to register the handler's work with: it just runs on.
    .then((request) => bot.webhooks.slack(request))
    .then(async (response) => {
      const body = Buffer.from(await response.arrayBuffer());
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      outgoing.end(body);
    })
    .catch((error: unknown) => {
      console.error(error);
      outgoing.writeHead(500);
      outgoing.end();
    });
});

await bot.initialize();
server.listen(Number(process.env.PORT), '127.0.0.1');
