import type { FakeFeishuApi } from '../../tests/helpers/fake-feishu-api.js';
import type { FakeSlackApi } from '../../tests/helpers/fake-slack-api.js';
import type { StreamedCompletion } from './streaming-model.js';

/** The platform calls one streamed reply made, read back from the fake platform APIs. */
export interface ReplyCalls {
  /** First call showing reply text, after the model's first token. */
  firstUpdateMilliseconds: number;
  /** Last call changing the text, after the model's last token. */
  finalAfterLastTokenMilliseconds: number;
  /** Calls after the first one that change the reply's text. */
  editCalls: number;
  /** Times of every call on the reply's message(s), for the rate check. */
  callTimes: number[];
}

/** The most calls that fall into any one-second window. */
export function maxInAnySecond(times: readonly number[]): number {
  const sorted = [...times].sort((left, right) => left - right);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= 1000) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

function measured(
  first: number | undefined,
  edits: readonly number[],
  completion: StreamedCompletion,
): ReplyCalls {
  if (first === undefined || completion.firstTokenAt === undefined || completion.lastTokenAt === undefined) {
    throw new Error('the reply never showed up on the platform');
  }
  const last = edits.at(-1) ?? first;
  return {
    firstUpdateMilliseconds: first - completion.firstTokenAt,
    finalAfterLastTokenMilliseconds: last - completion.lastTokenAt,
    editCalls: edits.length,
    callTimes: [first, ...edits],
  };
}

/** A Slack reply in thread `threadTs`: streamed (startStream…) or posted and updated (fallback). */
export function slackReplyCalls(
  slack: FakeSlackApi,
  channel: string,
  threadTs: string,
  completion: StreamedCompletion,
): ReplyCalls {
  const messageIds = new Set(
    [...slack.messages.values()]
      .filter((message) => message.channel === channel && message.threadTs === threadTs)
      .map((message) => message.ts),
  );
  const streamed = [...slack.messages.values()].some(
    (message) => messageIds.has(message.ts) && message.markdown.length > 0,
  );
  const opening = streamed ? 'chat.startStream' : 'chat.postMessage';
  const first = slack.calls.find(
    (call) => call.method === opening && call.args.channel === channel && call.args.thread_ts === threadTs,
  );
  const editMethods = new Set(['chat.appendStream', 'chat.stopStream', 'chat.update']);
  const edits = slack.calls
    .filter(
      (call) =>
        editMethods.has(call.method) && call.args.channel === channel && messageIds.has(String(call.args.ts)),
    )
    .map((call) => call.at);
  return measured(first?.at, edits, completion);
}

/** A Feishu reply to message `userMessageId`: a CardKit card, or an interactive card patched (fallback). */
export function feishuReplyCalls(
  feishu: FakeFeishuApi,
  userMessageId: string,
  completion: StreamedCompletion,
  cardkit: boolean,
): ReplyCalls {
  const reply = feishu.calls.find(
    (call) =>
      call.method === 'POST' &&
      call.path === `/open-apis/im/v1/messages/${userMessageId}/reply` &&
      call.code === 0,
  );
  let edits: number[];
  if (cardkit) {
    const content = JSON.parse(String(reply?.body?.content ?? '{}')) as { data?: { card_id?: string } };
    const prefix = `/open-apis/cardkit/v1/cards/${content.data?.card_id}/`;
    edits = feishu.calls.filter((call) => call.path.startsWith(prefix)).map((call) => call.at);
  } else {
    const replyIds = new Set(
      feishu
        .sentMessages()
        .filter((message) => message.replyTo === userMessageId)
        .map((message) => message.messageId),
    );
    edits = feishu.calls
      .filter((call) => call.method === 'PATCH' && replyIds.has(call.path.split('/').at(-1) ?? ''))
      .map((call) => call.at);
  }
  return measured(reply?.at, edits, completion);
}
