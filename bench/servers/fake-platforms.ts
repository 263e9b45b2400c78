import { FakeFeishuApi } from '../../tests/helpers/fake-feishu-api.js';
import { startFakeModelServer } from '../../tests/helpers/fake-model-server.js';
import { type RecordedCall, startFakeSlackApi } from '../../tests/helpers/fake-slack-api.js';
import type { FakeSettings, ModelTiming, SlackReplyTiming } from '../lib/fake-platforms.js';
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

/** The thread a reply call belongs to, or undefined when it is not one (or Slack answered it 429). */
function replyThread(
  call: RecordedCall,
  channel: string,
  limited: ReadonlySet<RecordedCall>,
  prefix = false,
) {
  const inChannel = prefix ? String(call.args.channel).startsWith(channel) : call.args.channel === channel;
  if (!inChannel || !replyMethods.has(call.method) || limited.has(call)) return undefined;
  const opens = call.method === 'chat.postMessage' || call.method === 'chat.startStream';
  return opens
    ? String(call.args.thread_ts ?? '')
    : slack.messages.get(`${String(call.args.channel)}:${String(call.args.ts)}`)?.threadTs;
}

/** Folds one reply call into its thread's timing. */
function record(timing: SlackReplyTiming, call: RecordedCall): void {
  timing.openedAt ??= call.at;
  if (timing.firstAt === undefined && showsText(call.args)) timing.firstAt = call.at;
  if (call.method === 'chat.postMessage' && timing.doneAt === undefined) timing.doneAt = call.at;
  if (call.method === 'chat.stopStream') timing.doneAt = call.at;
}

const newTiming = (thread: string): SlackReplyTiming => ({
  thread,
  openedAt: undefined,
  firstAt: undefined,
  doneAt: undefined,
});

/**
 * Per thread of `channel`: the first reply call (a stream may open empty), when the reply first showed
 * text, and when it was complete (chat.stopStream of a streamed reply, else its first chat.postMessage). The
 * Slack SDK's ChatStreamer buffers 256 characters, so "first text" is the first call with text. Calls Slack
 * answered 429 do not count.
 */
function slackReplies(channel: string): SlackReplyTiming[] {
  const byThread = new Map<string, SlackReplyTiming>();
  const limited = new Set(slack.rateLimited);
  for (const call of slack.calls) {
    const thread = replyThread(call, channel, limited);
    if (thread === undefined) continue;
    const timing = byThread.get(thread) ?? newTiming(thread);
    record(timing, call);
    byThread.set(thread, timing);
  }
  return [...byThread.values()];
}

/**
 * For closed loops: tells the parent as each thread of the channels named `channel…` gets its first reply call
 * and when its reply is complete, scanning the calls that arrived since the last look.
 */
let watcher: NodeJS.Timeout | undefined;
function watch(channel: string): void {
  clearInterval(watcher);
  const byThread = new Map<string, SlackReplyTiming>();
  let seen = slack.calls.length;
  watcher = setInterval(() => {
    const limited = new Set(slack.rateLimited);
    for (; seen < slack.calls.length; seen++) {
      const call = slack.calls[seen] as RecordedCall;
      const thread = replyThread(call, channel, limited, true);
      if (thread === undefined) continue;
      const timing = byThread.get(thread) ?? newTiming(thread);
      const [opened, done] = [timing.openedAt, timing.doneAt];
      record(timing, call);
      byThread.set(thread, timing);
      if (opened === undefined || (done === undefined && timing.doneAt !== undefined))
        process.send?.({ type: 'reply', timing });
    }
  }, 2);
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
  for (const call of slack.rateLimited)
    result[`slack 429 ${call.method}`] = (result[`slack 429 ${call.method}`] ?? 0) + 1;
  for (const call of feishu.calls) {
    const key = `feishu ${call.method} ${call.path.replace(/\/(om|oc|ou|7)[_0-9a-z-]+/gi, '/:id')}`;
    result[key] = (result[key] ?? 0) + 1;
  }
  return result;
}

/** Slack's rate tiers on or off (off by default), and the model's answer: long and streamed, or the default. */
function configure(settings: FakeSettings): void {
  slack.rateTiers = settings.rateTiers ?? false;
  slack.agents.available = settings.agentSessions ?? false;
  model.setFallback(settings.modelReply ?? { text: reply });
}

function reset(): void {
  clearInterval(watcher);
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
  command: 'reset' | 'slackReplies' | 'modelTimings' | 'counts' | 'configure' | 'watch' | 'slackCalls';
  channel?: string;
  settings?: FakeSettings;
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
    case 'slackCalls': {
      const limited = new Set(slack.rateLimited);
      result = slack.calls.map((call) => ({ method: call.method, at: call.at, limited: limited.has(call) }));
      break;
    }
    case 'configure':
      configure(message.settings ?? {});
      result = true;
      break;
    case 'watch':
      watch(message.channel ?? '');
      result = true;
      break;
  }
  process.send?.({ type: 'answer', id: message.id, result });
});

process.send?.({ type: 'ready', slackUrl: slack.url, modelUrl: model.baseUrl, feishuUrl: feishu.baseUrl });
