import postgres from 'postgres';
import { FakeFeishuApi } from '../tests/helpers/fake-feishu-api.js';
import { type FakeSlackApi, startFakeSlackApi } from '../tests/helpers/fake-slack-api.js';
import { team } from '../tests/unit/slack/payloads.js';
import { type Aim, type Benchmark, type BenchmarkContext, profilingFlags } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { withBenchDatabase } from './lib/database.js';
import { keepAliveAgent, type OutgoingRequest, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { feishuMention, slackMention, slackUserId } from './lib/platform-requests.js';
import { feishuReplyCalls, maxInAnySecond, type ReplyCalls, slackReplyCalls } from './lib/reply-calls.js';
import { milliseconds } from './lib/stats.js';
import { type StreamedCompletion, type StreamingModel, startStreamingModel } from './lib/streaming-model.js';

/**
 * 4. Streaming latency: a model streaming chunks 50 ms apart; for each platform's native streaming path
 * and its fallback, the time from the model's first token to the first platform update, the number of
 * edit calls per reply, and the busiest second of rate-limited calls on one message or card against the limit.
 */

const chunkDelayMilliseconds = 50;
const longReply =
  'Here is where the payments-api rollout stands. Version 4.12.0 is live in eu-west-1 and us-east-2; ' +
  'ap-southeast-1 is still on 4.11.3 because the canary there showed a slow query on the ledger table. ' +
  'Error rates are back under 0.3% everywhere after the connection pool fix, and p99 latency is 180 ms in ' +
  'the two upgraded regions. Chen is preparing an index for the slow query; once it is applied we can ' +
  'resume the rollout, probably tomorrow morning. Open items: update the runbook with the new pool size, ' +
  'add a dashboard panel for pool saturation, and confirm with finance that the reconciliation job ran ' +
  'cleanly overnight. I will post an update here when the index is in place.';
const shortReply =
  'Version 4.12.0 is live in two regions; ap-southeast-1 waits for an index on the ledger table. ' +
  'Error rates are under 0.3% and p99 is 180 ms. Chen expects to resume the rollout tomorrow.';

interface PathSpec {
  platform: 'Slack' | 'Feishu';
  path: string;
  limit: string;
  /** Allowed calls per message per second (undefined: no per-message limit documented). */
  perSecond: number | undefined;
}

interface PathResult extends PathSpec {
  replies: ReplyCalls[];
}

async function waitUntilDone(sql: postgres.Sql, dedupKey: string, timeoutMilliseconds = 60_000) {
  const deadline = Date.now() + timeoutMilliseconds;
  for (;;) {
    const rows = await sql<
      { status: string }[]
    >`select status from inbound_events where dedup_key = ${dedupKey}`;
    if (rows[0]?.status === 'done') return;
    if (Date.now() > deadline) throw new Error(`reply to ${dedupKey} not finished in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Harness {
  butler: ButlerProcess;
  sql: postgres.Sql;
  slack: FakeSlackApi;
  feishu: FakeFeishuApi;
  model: StreamingModel;
  replies: number;
}

/** Sends one mention at a time and waits for its turn to finish; returns each reply's model completion. */
async function sendSequentially(
  harness: Harness,
  path: string,
  next: (index: number) => { request: OutgoingRequest; dedupKey: string; anchor: string },
) {
  const agent = keepAliveAgent(2);
  const sent: Array<{ anchor: string; completion: StreamedCompletion }> = [];
  try {
    for (let index = 0; index < harness.replies; index++) {
      const before = harness.model.completions.length;
      const mention = next(index);
      const answer = await post(agent, new URL(`${harness.butler.url}${path}`), mention.request);
      if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
      await waitUntilDone(harness.sql, mention.dedupKey);
      const completion = harness.model.completions[before];
      if (!completion) throw new Error('the model was not called');
      sent.push({ anchor: mention.anchor, completion });
    }
  } finally {
    agent.destroy();
  }
  return sent;
}

async function slackPath(harness: Harness, streaming: boolean): Promise<PathResult> {
  harness.slack.streaming = streaming;
  const channel = streaming ? 'C0STREAM' : 'C0FALLBACK';
  const sent = await sendSequentially(harness, '/slack/events', (index) => {
    const { request, ts } = slackMention({ channel, user: slackUserId(index) });
    // A Slack message is deduplicated by its workspace, channel and ts.
    return { request, dedupKey: `${team}:${channel}:${ts}`, anchor: ts };
  });
  return {
    platform: 'Slack',
    path: streaming
      ? 'native: chat.startStream / appendStream / stopStream'
      : 'fallback: chat.postMessage + chat.update',
    limit: streaming
      ? 'Tier 4 (100+/min per workspace); none per message'
      : 'chat.update: about 1/s per message',
    perSecond: streaming ? undefined : 1,
    replies: sent.map(({ anchor, completion }) =>
      slackReplyCalls(harness.slack, channel, anchor, completion),
    ),
  };
}

async function feishuPath(harness: Harness, cardkit: boolean): Promise<PathResult> {
  if (!cardkit) harness.feishu.cardkitUnavailable();
  const sent = await sendSequentially(harness, '/feishu/events', () => {
    const { request, messageId } = feishuMention({ chatId: 'oc_stream', senderOpenId: 'ou_streamer' });
    return { request, dedupKey: messageId, anchor: messageId };
  });
  harness.feishu.restore();
  return {
    platform: 'Feishu',
    path: cardkit ? 'native: CardKit streaming card' : 'fallback: interactive card + PATCH',
    limit: cardkit ? 'CardKit: 10 operations/s per card' : 'PATCH: 5/s per message',
    perSecond: cardkit ? 10 : 5,
    replies: sent.map(({ anchor, completion }) =>
      feishuReplyCalls(harness.feishu, anchor, completion, cardkit),
    ),
  };
}

function row(result: PathResult): string[] {
  const firstUpdates = result.replies.map((reply) => reply.firstUpdateMilliseconds);
  const finals = result.replies.map((reply) => reply.finalAfterLastTokenMilliseconds);
  const edits = result.replies.map((reply) => reply.editCalls);
  const busiest = Math.max(...result.replies.map((reply) => maxInAnySecond(reply.limitedCallTimes)));
  const sorted = (values: number[]) => [...values].sort((left, right) => left - right);
  const within =
    result.perSecond === undefined
      ? 'n/a'
      : busiest < result.perSecond
        ? 'yes'
        : busiest === result.perSecond
          ? 'yes, at the limit'
          : '**no**';
  return [
    result.platform,
    result.path,
    String(result.replies.length),
    `${milliseconds(sorted(firstUpdates)[Math.floor(firstUpdates.length / 2)] ?? Number.NaN)} / ${milliseconds(Math.max(...firstUpdates))}`,
    milliseconds(sorted(finals)[Math.floor(finals.length / 2)] ?? Number.NaN),
    (edits.reduce((sum, value) => sum + value, 0) / Math.max(1, edits.length)).toFixed(1),
    String(busiest),
    result.limit,
    within,
  ];
}

async function run(context: BenchmarkContext) {
  const replies = context.quick ? 1 : 5;
  const reply = context.quick ? shortReply : longReply;
  const slack = await startFakeSlackApi();
  const feishu = await FakeFeishuApi.start();
  const model = await startStreamingModel({ reply, chunkDelayMilliseconds });
  try {
    return await withBenchDatabase(async (databaseUrl) => {
      const butler = await startButlerProcess({
        name: 'Butler (streaming)',
        database: { kind: 'postgres', url: databaseUrl },
        slackApiUrl: slack.url,
        feishuBaseUrl: feishu.baseUrl,
        modelUrl: model.baseUrl,
        nodeFlags: profilingFlags(context, 'streaming'),
      });
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const harness: Harness = { butler, sql, slack, feishu, model, replies };
        const results: PathResult[] = [];
        context.log('streaming: Slack native');
        results.push(await slackPath(harness, true));
        context.log('streaming: Slack fallback');
        results.push(await slackPath(harness, false));
        const readiness = (await (await fetch(`${butler.url}/readyz`)).json()) as {
          checks?: Record<string, string>;
        };
        const feishuWired = readiness.checks?.feishu === 'ok';
        if (feishuWired) {
          context.log('streaming: Feishu CardKit');
          results.push(await feishuPath(harness, true));
          context.log('streaming: Feishu fallback');
          results.push(await feishuPath(harness, false));
        }
        const chunks = model.completions[0]?.chunks ?? 0;
        const markdown = [
          table(
            [
              'platform',
              'path',
              'replies',
              'first update after first token, p50 / max ms',
              'final text after last token, p50 ms',
              'edit calls per reply',
              'busiest second (calls the limit counts, on one message or card)',
              'platform limit',
              'within limit',
            ],
            results.map(row),
          ),
          '',
          bullets([
            `The model streams a ${reply.length}-character reply in ${chunks} chunks of 1-3 words, ${chunkDelayMilliseconds} ms apart (about ${((chunks * chunkDelayMilliseconds) / 1000).toFixed(1)} s). Replies are sent one at a time.`,
            'First update: the first platform call that shows reply text (Slack: chat.startStream, or chat.postMessage in the fallback; Feishu: the reply message carrying the card). ' +
              'Edit calls: the calls after it that change the text (appendStream and stopStream; chat.update; CardKit content updates and the closing settings call; PATCH).',
            'The busiest second counts the calls each limit applies to: every stream call on a Slack message (no per-message limit is documented; they count toward the method tiers); chat.update; CardKit operations on the card (its creation, content updates, the closing settings call); PATCH.',
            "Butler's pacing: Slack streams append at most every 600 ms and chat.update runs at most once a second; Feishu CardKit updates at most every 100 ms and PATCH every 1.5 s.",
            'The fallbacks are forced in the fakes: Slack answers chat.startStream with `method_not_supported_for_channel_type`; Feishu answers every CardKit call with HTTP 503.',
            ...(feishuWired
              ? []
              : [
                  'Feishu: not measured: the Feishu connector is not wired into `src/platform-connectors.ts` yet.',
                ]),
          ]),
        ].join('\n');
        const slowest = Math.max(
          ...results.flatMap((result) => result.replies.map((entry) => entry.firstUpdateMilliseconds)),
        );
        const busiest = (result: PathResult) =>
          Math.max(...result.replies.map((entry) => maxInAnySecond(entry.limitedCallTimes)));
        const overLimit = results.filter(
          (result) => result.perSecond !== undefined && busiest(result) > result.perSecond,
        );
        const atLimit = results.filter(
          (result) => result.perSecond !== undefined && busiest(result) === result.perSecond,
        );
        const describe = (list: PathResult[]) =>
          list
            .map((result) => `${result.platform} ${result.path.split(':')[0]} (${result.limit})`)
            .join('; ');
        const aims: Aim[] = [
          {
            aim: 'Streaming: first platform update within 250 ms of the first token',
            measured: `at most ${milliseconds(slowest)} ms over ${results.length} paths`,
            met: slowest <= 250,
          },
          {
            aim: "Streaming: edit calls within the platforms' rate limits",
            measured: [
              overLimit.length === 0
                ? 'every path within its limit'
                : `over the limit: ${describe(overLimit)}`,
              ...(atLimit.length > 0 ? [`at the limit, no margin: ${describe(atLimit)}`] : []),
            ].join('; '),
            met: overLimit.length === 0,
          },
        ];
        return { markdown, aims };
      } finally {
        await sql.end({ timeout: 5 });
        await butler.stop();
      }
    });
  } finally {
    await model.close();
    await feishu.close();
    await slack.close();
  }
}

export const streamingBenchmark: Benchmark = {
  name: 'streaming',
  title: '4. Streaming: first update after the first token, and edit calls per reply',
  run,
};
