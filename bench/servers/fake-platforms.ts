import { FakeFeishuApi } from '../../tests/helpers/fake-feishu-api.js';
import { startFakeModelServer } from '../../tests/helpers/fake-model-server.js';
import { startFakeSlackApi } from '../../tests/helpers/fake-slack-api.js';
import type { ModelTiming, SlackReplyTiming } from '../lib/fake-platforms.js';
import { slackUserId } from '../lib/platform-requests.js';

/**
 * The platforms' and the model's fakes in a process of their own, so the servers' outbound traffic
 * under load neither slows the load generator's event loop nor is slowed by it. The tests' fakes,
 * driven over IPC: `{ id, command }` → `{ type: 'answer', id, result }`.
 *
 * Environment: BENCH_MODEL_REPLY (the model's answer, sent at once), BENCH_SLACK_USERS (how many
 * users `U0000000`… the fake Slack knows by name).
 */

const reply = process.env.BENCH_MODEL_REPLY || 'ok';
const slack = await startFakeSlackApi();
const model = await startFakeModelServer();
const feishu = await FakeFeishuApi.start();
model.setFallback({ text: reply });
const slackUsers = Number(process.env.BENCH_SLACK_USERS ?? 0);
for (let index = 0; index < slackUsers; index++)
  slack.users.set(slackUserId(index), { name: `user${index}` });
// The bot itself, as real Slack knows it (the Chat SDK's adapter looks up every user a message mentions).
slack.users.set(slack.identity.userId, { name: 'butler' });

/** Whether a posting call puts text on screen: text, blocks or Markdown, or streamed `markdown_text` chunks. */
function showsText(args: Record<string, unknown>): boolean {
  const filled = (value: unknown) => typeof value === 'string' && value.length > 0;
  if (filled(args.text) || filled(args.markdown_text)) return true;
  if (Array.isArray(args.blocks) && args.blocks.length > 0) return true;
  return (
    Array.isArray(args.chunks) &&
    args.chunks.some((chunk) => (chunk as { type?: unknown }).type === 'markdown_text' && filled(chunk.text))
  );
}

const replyMethods = new Set([
  'chat.postMessage',
  'chat.startStream',
  'chat.appendStream',
  'chat.stopStream',
]);

/**
 * Per thread of `channel`: when the reply first showed text, and when it was complete (chat.stopStream
 * of a streamed reply, else its first chat.postMessage). A stream may open empty and carry its text only
 * later (the Slack SDK's ChatStreamer buffers 256 characters), so "first text" is the first call with text.
 */
function slackReplies(channel: string): SlackReplyTiming[] {
  const byThread = new Map<string, SlackReplyTiming>();
  for (const call of slack.calls) {
    if (call.args.channel !== channel || !replyMethods.has(call.method)) continue;
    const opens = call.method === 'chat.postMessage' || call.method === 'chat.startStream';
    const thread = opens
      ? String(call.args.thread_ts ?? '')
      : slack.messages.get(`${channel}:${String(call.args.ts)}`)?.threadTs;
    if (thread === undefined) continue;
    const timing = byThread.get(thread) ?? { thread, firstAt: undefined, doneAt: undefined };
    if (timing.firstAt === undefined && showsText(call.args)) timing.firstAt = call.at;
    if (call.method === 'chat.postMessage' && timing.doneAt === undefined) timing.doneAt = call.at;
    if (call.method === 'chat.stopStream') timing.doneAt = call.at;
    byThread.set(thread, timing);
  }
  return [...byThread.values()];
}

/**
 * Per model request that names a thread in its last message (`… [thread 1234.5678]`): when it arrived and
 * when its answer's last byte was written.
 */
function modelTimings(): ModelTiming[] {
  return model.requests.flatMap((request) => {
    const last = request.messages.at(-1)?.content;
    const thread = typeof last === 'string' ? /\[thread (\d+\.\d+)\]/.exec(last)?.[1] : undefined;
    return thread ? [{ thread, receivedAt: request.receivedAt, answeredAt: request.answeredAt }] : [];
  });
}

function counts(): Record<string, number> {
  const result: Record<string, number> = { modelRequests: model.requests.length };
  for (const call of slack.calls) result[`slack ${call.method}`] = (result[`slack ${call.method}`] ?? 0) + 1;
  for (const call of feishu.calls) {
    const key = `feishu ${call.method} ${call.path.replace(/\/(om|oc|ou|7)[_0-9a-z-]+/gi, '/:id')}`;
    result[key] = (result[key] ?? 0) + 1;
  }
  return result;
}

function reset(): void {
  slack.reset();
  model.reset();
  model.setFallback({ text: reply });
  feishu.restore();
  feishu.calls.length = 0;
  feishu.messages.clear();
  feishu.cards.clear();
  feishu.reactions.clear();
}

interface Command {
  id: number;
  command: 'reset' | 'slackReplies' | 'modelTimings' | 'counts';
  channel?: string;
}

process.on('message', (message: Command) => {
  let result: unknown;
  switch (message.command) {
    case 'reset':
      reset();
      result = true;
      break;
    case 'slackReplies':
      result = slackReplies(message.channel ?? '');
      break;
    case 'modelTimings':
      result = modelTimings();
      break;
    case 'counts':
      result = counts();
      break;
  }
  process.send?.({ type: 'answer', id: message.id, result });
});

process.send?.({ type: 'ready', slackUrl: slack.url, modelUrl: model.baseUrl, feishuUrl: feishu.baseUrl });
