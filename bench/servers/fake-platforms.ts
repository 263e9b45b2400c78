import { FakeFeishuApi } from '../../tests/helpers/fake-feishu-api.js';
import { startFakeModelServer } from '../../tests/helpers/fake-model-server.js';
import { startFakeSlackApi } from '../../tests/helpers/fake-slack-api.js';
import type { SlackReplyTiming } from '../lib/fake-platforms.js';
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

function slackReplies(channel: string): SlackReplyTiming[] {
  const byThread = new Map<string, SlackReplyTiming>();
  for (const call of slack.calls) {
    if (call.args.channel !== channel) continue;
    if (call.method === 'chat.postMessage' || call.method === 'chat.startStream') {
      const thread = String(call.args.thread_ts ?? '');
      const timing = byThread.get(thread) ?? { thread, firstAt: call.at, doneAt: undefined };
      if (call.method === 'chat.postMessage' && timing.doneAt === undefined) timing.doneAt = call.at;
      byThread.set(thread, timing);
    } else if (call.method === 'chat.stopStream') {
      const message = slack.messages.get(`${channel}:${String(call.args.ts)}`);
      const timing = message?.threadTs ? byThread.get(message.threadTs) : undefined;
      if (timing) timing.doneAt = call.at;
    }
  }
  return [...byThread.values()];
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
  command: 'reset' | 'slackReplies' | 'counts';
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
    case 'counts':
      result = counts();
      break;
  }
  process.send?.({ type: 'answer', id: message.id, result });
});

process.send?.({ type: 'ready', slackUrl: slack.url, modelUrl: model.baseUrl, feishuUrl: feishu.baseUrl });
