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
  /** Times of the calls the platform's per-message (or per-card) limit counts. */
  limitedCallTimes: number[];
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
  limited: readonly number[],
): ReplyCalls {
  if (first === undefined || completion.firstTokenAt === undefined || completion.lastTokenAt === undefined) {
    throw new Error('the reply never showed up on the platform');
  }
  const last = edits.at(-1) ?? first;
  return {
    firstUpdateMilliseconds: first - completion.firstTokenAt,
    finalAfterLastTokenMilliseconds: last - completion.lastTokenAt,
    editCalls: edits.length,
    limitedCallTimes: [...limited],
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
  // Streams have no documented per-message limit (every call counts toward the method's tier);
  // the fallback's limit is chat.update's.
  return measured(first?.at, edits, completion, streamed && first ? [first.at, ...edits] : edits);
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
  let limited: number[];
  if (cardkit) {
    const content = JSON.parse(String(reply?.body?.content ?? '{}')) as { data?: { card_id?: string } };
    const prefix = `/open-apis/cardkit/v1/cards/${content.data?.card_id}/`;
    edits = feishu.calls.filter((call) => call.path.startsWith(prefix)).map((call) => call.at);
    // CardKit's limit counts operations on the card entity: its creation (just before the reply) and updates.
    const created = feishu.calls
      .filter(
        (call) =>
          call.method === 'POST' &&
          call.path === '/open-apis/cardkit/v1/cards' &&
          call.at <= (reply?.at ?? 0),
      )
      .at(-1);
    limited = created ? [created.at, ...edits] : edits;
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
    limited = edits;
  }
  return measured(reply?.at, edits, completion, limited);
}
