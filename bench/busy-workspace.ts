import type { Aim, Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { withBenchDatabase } from './lib/database.js';
import {
  type FakePlatforms,
  repliesInChannels,
  type SlackCallRecord,
  startFakePlatforms,
} from './lib/fake-platforms.js';
import { keepAliveAgent, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { freshTs, slackMention, slackUserId } from './lib/platform-requests.js';
import { milliseconds, summarize } from './lib/stats.js';

/**
 * A busy workspace (issue 33): hundreds of mentions within a few seconds in 50 channels of one workspace, an
 * agent app, against a fake Slack that enforces the documented tiers (429 with Retry-After past them). Butler
 * as users run it (src/main.ts, tiers paced). What a person sees: when their message reached the model, when
 * the reply first showed text, when it was whole; and what Slack saw: calls per method in any minute, 429s.
 */

const channels = 50;
const paragraph = (index: number) =>
  `${index + 1}. Check the service's health endpoint, then its error rate and latency over the last hour. `;
/** About 2,000 characters, streamed in 50-character pieces every 100 ms: 4 seconds of model output. */
const reply = Array.from({ length: 20 }, (_, index) => paragraph(index)).join('\n');
const modelReply = { text: reply, chunks: reply.match(/[\s\S]{1,50}/g) ?? [], chunkDelayMs: 100 };

/** Slack's documented tiers for the methods a reply uses (platforms.md "Rate tiers"). */
const tiers: Record<string, number> = {
  'chat.startStream': 20,
  'chat.stopStream': 20,
  'chat.update': 50,
  'chat.appendStream': 100,
  'agents.sessions.setStatus': 50,
};

interface Run {
  mentions: number;
  acknowledged: number;
  toModel: number[];
  firstText: number[];
  whole: number[];
  complete: number;
  rateLimited: number;
  ways: Record<string, number>;
  busiestMinute: Record<string, number>;
  calls: Record<string, number>;
  modelRequests: number;
  seconds: number;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { sizes: [100], drainMilliseconds: 120_000 }
    : { sizes: [100, 200, 1000], drainMilliseconds: 420_000 };
}

/** The most calls of each method in any 60 s (those answered 429 left out), against its tier. */
function busiestMinute(calls: readonly SlackCallRecord[]): Record<string, number> {
  const result: Record<string, number> = {};
  const byMethod = new Map<string, number[]>();
  for (const call of calls) {
    if (call.limited) continue;
    const times = byMethod.get(call.method) ?? [];
    times.push(call.at);
    byMethod.set(call.method, times);
  }
  for (const [method, times] of byMethod) {
    let most = 0;
    for (let start = 0, end = 0; end < times.length; end++) {
      while ((times[end] ?? 0) - (times[start] ?? 0) >= 60_000) start++;
      most = Math.max(most, end - start + 1);
    }
    result[method] = most;
  }
  return result;
}

/** `butler_reply_deliveries_total{platform="slack",way=…}` from Butler's /metrics. */
async function deliveryWays(butler: ButlerProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${butler.url}/metrics`)).text();
  const ways: Record<string, number> = {};
  for (const match of text.matchAll(/^butler_reply_deliveries_total\{platform="slack",way="(\w+)"\} (\d+)/gm))
    ways[match[1] as string] = Number(match[2]);
  return ways;
}

async function measure(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  butler: ButlerProcess,
  mentions: number,
): Promise<Run> {
  await fakes.reset();
  await fakes.configure({ rateTiers: true, agentSessions: true, modelReply });
  const prefix = `C0BUSY${mentions}X`;
  const sentAt = new Map<string, number>();
  const agent = keepAliveAgent(50);
  const started = Date.now();
  const answers = await Promise.all(
    Array.from({ length: mentions }, (_, index) => {
      const ts = freshTs();
      sentAt.set(ts, Date.now());
      const channel = `${prefix}${index % channels}`;
      const text = `what is the status of the deploy? [thread ${ts}]`;
      const mention = slackMention({ channel, user: slackUserId(index), ts, text });
      return post(agent, new URL(`${butler.url}/slack/events`), mention.request);
    }),
  );
  agent.destroy();
  const acknowledged = answers.filter((answer) => answer.status === 200).length;
  const deadline = Date.now() + settings(context).drainMilliseconds;
  let replies = await repliesInChannels(fakes, prefix, channels);
  const done = () => replies.filter((entry) => entry.doneAt !== undefined).length;
  while (done() < acknowledged && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    replies = await repliesInChannels(fakes, prefix, channels);
  }
  const calls = await fakes.slackCalls();
  const since = (at: number | undefined, thread: string) => {
    const sent = sentAt.get(thread);
    return at === undefined || sent === undefined ? [] : [at - sent];
  };
  const model = await fakes.modelTimings();
  const counts: Record<string, number> = {};
  for (const call of calls) if (!call.limited) counts[call.method] = (counts[call.method] ?? 0) + 1;
  const run: Run = {
    mentions,
    acknowledged,
    toModel: model.flatMap((timing) => since(timing.receivedAt, timing.thread)),
    firstText: replies.flatMap((entry) => since(entry.firstAt, entry.thread)),
    whole: replies.flatMap((entry) => since(entry.doneAt, entry.thread)),
    complete: done(),
    rateLimited: calls.filter((call) => call.limited).length,
    ways: await deliveryWays(butler),
    busiestMinute: busiestMinute(calls),
    calls: counts,
    modelRequests: model.length,
    seconds: (Math.max(started, ...replies.map((entry) => entry.doneAt ?? started)) - started) / 1000,
  };
  context.log(
    `busy-workspace: ${mentions} mentions: ${run.complete}/${mentions} whole, ${run.rateLimited} answered 429, last after ${run.seconds.toFixed(1)} s`,
  );
  return run;
}

function rows(runs: readonly Run[]) {
  return runs.map((run) => {
    const toModel = summarize(run.toModel);
    const first = summarize(run.firstText);
    const whole = summarize(run.whole);
    const ways = Object.entries(run.ways)
      .map(([way, count]) => `${way} ${count}`)
      .join(', ');
    return [
      String(run.mentions),
      `${run.complete}/${run.acknowledged}`,
      String(run.rateLimited),
      `${milliseconds(toModel.p50)} / ${milliseconds(toModel.max)}`,
      `${milliseconds(first.p50)} / ${milliseconds(first.p99)}`,
      `${milliseconds(whole.p50)} / ${milliseconds(whole.p99)} / ${milliseconds(whole.max)}`,
      ways || 'n/a',
    ];
  });
}

function callRows(runs: readonly Run[]) {
  const methods = [...new Set(runs.flatMap((run) => Object.keys(run.calls)))].sort();
  return methods.map((method) => [
    method,
    tiers[method] === undefined ? 'per channel, or Retry-After only' : String(tiers[method]),
    ...runs.map((run) => `${run.calls[method] ?? 0} (${run.busiestMinute[method] ?? 0})`),
  ]);
}

function aims(runs: readonly Run[]): Aim[] {
  const hundred = runs.find((run) => run.mentions === 100);
  if (!hundred) return [];
  const toModel = summarize(hundred.toModel).max;
  const whole = summarize(hundred.whole).max;
  return [
    {
      aim: 'Busy workspace, 100 mentions in 50 channels (tiers enforced): every message reaches the model within 20 s',
      measured: `${hundred.modelRequests}/${hundred.mentions} reached the model, the last after ${milliseconds(toModel)} ms`,
      met: hundred.modelRequests >= hundred.mentions && toModel <= 20_000,
    },
    {
      aim: 'Busy workspace, 100 mentions: every reply whole within 90 s, no 429',
      measured: `${hundred.complete}/${hundred.mentions} whole, the last after ${milliseconds(whole)} ms; ${hundred.rateLimited} × 429`,
      met: hundred.complete >= hundred.mentions && whole <= 90_000 && hundred.rateLimited === 0,
    },
  ];
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply: 'ok', slackUsers: 1000 });
  const runs: Run[] = [];
  try {
    await withBenchDatabase(async (databaseUrl) => {
      for (const size of settings(context).sizes) {
        // A fresh process per run: budgets (Butler's and the fake's) start empty.
        const butler = await startButlerProcess({
          name: 'Butler',
          database: { kind: 'postgres', url: databaseUrl },
          slackApiUrl: fakes.slackUrl,
          modelUrl: fakes.modelUrl,
          config: { worker: { concurrency: 64 } },
          slackRateTiers: true,
        });
        try {
          runs.push(await measure(context, fakes, butler, size));
        } finally {
          await butler.stop();
        }
      }
    });
  } finally {
    await fakes.stop();
  }
  const markdown = [
    table(
      [
        'mentions',
        'whole/acknowledged',
        'answered 429',
        'sent → model request p50 / max ms',
        'first text p50 / p99 ms',
        'whole p50 / p99 / max ms',
        'ways (metrics)',
      ],
      rows(runs),
    ),
    '',
    table(
      ['method', 'tier (a minute)', ...runs.map((each) => `calls at ${each.mentions} (busiest minute)`)],
      callRows(runs),
    ),
    '',
    bullets([
      `Each run sends that many mentions as fast as 50 connections take them (a few seconds), each opening a thread, from as many people, in ${channels} channels of one workspace, to a fresh Butler process (src/main.ts, its Slack pacing on; Postgres; 64 worker slots) whose Slack app is an agent (sessions on).`,
      `The model streams each reply: ${reply.length} characters in ${modelReply.chunks.length} pieces, one every ${modelReply.chunkDelayMs} ms.`,
      'The fake Slack enforces the tiers per method and workspace (tests/helpers/fake-slack-rate-tiers.ts) and answers 429 with Retry-After past them; calls it answered 429 count nowhere else.',
      'sent → model request: from the mention to the fake model receiving its turn. first text: the first call showing reply text; whole: `chat.stopStream` of a streamed reply, or the `chat.postMessage` of one posted whole. ways: `butler_reply_deliveries_total` (stream, posted whole when the stream budget was spent, posted and updated).',
      'busiest minute: the most calls of the method that Slack took in any 60 s.',
    ]),
  ].join('\n');
  return { markdown, aims: aims(runs) };
}

export const busyWorkspaceBenchmark: Benchmark = {
  name: 'busy-workspace',
  title: 'A busy workspace: hundreds of mentions at once within Slack’s tiers',
  run,
};
