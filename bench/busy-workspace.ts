import { readdirSync, readlinkSync } from 'node:fs';
import type { Aim, Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { query, withBenchDatabase } from './lib/database.js';
import {
  type FakePlatforms,
  repliesInChannels,
  type SlackCallRecord,
  startFakePlatforms,
} from './lib/fake-platforms.js';
import { keepAliveAgent, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { freshTs, slackMention, slackUserId } from './lib/platform-requests.js';
import { residentMemory } from './lib/processes.js';
import { megabytes, milliseconds, summarize } from './lib/stats.js';

/**
 * A busy workspace (issues 33, 42): hundreds of mentions within a few seconds in 50 channels of one workspace,
 * an agent app, against a fake Slack that enforces the documented tiers (429 with Retry-After past them), and a
 * model that takes 4 s a reply. Butler as users run it (src/main.ts, tiers paced, its default worker settings).
 * What a person sees: when their message reached the model, when the reply first showed text, when it was
 * whole; what Slack saw: calls per method in any minute, 429s; and what the turns in flight cost Butler's
 * process: resident memory, open sockets, database connections.
 */

const channels = 50;
const paragraph = (index: number) =>
  `${index + 1}. Check the service's health endpoint, then its error rate and latency over the last hour. `;
/** About 500 characters in 5 pieces, 800 ms apart: a reply of 4 seconds, as a real model writes one. */
const reply = Array.from({ length: 5 }, (_, index) => paragraph(index)).join('\n');
const modelReply = { text: reply, chunks: reply.match(/[\s\S]{1,101}/g) ?? [], chunkDelayMs: 800 };

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
  /** Model requests open at once, at most. */
  inFlight: number;
  /** Resident memory before the mentions, and at its peak during the run (VmHWM). */
  idleRss: number;
  peakRss: number;
  /** The most sockets the process had open, and Postgres connections to its database, at one sample. */
  sockets: number;
  databaseConnections: number;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { sizes: [100], drainMilliseconds: 120_000 }
    : { sizes: [100, 1000], drainMilliseconds: 420_000 };
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

/** Sockets a process has open (Linux /proc). */
function openSockets(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count += 1;
    } catch {
      // Closed between the listing and the read.
    }
  }
  return count;
}

/** Samples the process's sockets and its database's connections every 250 ms until stopped; keeps the most. */
function sampleCosts(pid: number, databaseUrl: string) {
  const most = { sockets: 0, databaseConnections: 0 };
  const name = new URL(databaseUrl).pathname.slice(1);
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    most.sockets = Math.max(most.sockets, openSockets(pid));
    sampling = sampling.then(async () => {
      const [row] = await query<{ connections: number }>(
        databaseUrl,
        `select count(*)::int as connections from pg_stat_activity where datname = '${name}'`,
      );
      // The sampling query's own connection is not Butler's.
      most.databaseConnections = Math.max(most.databaseConnections, (row?.connections ?? 1) - 1);
    });
  }, 250);
  return async () => {
    clearInterval(timer);
    await sampling;
    return most;
  };
}

/** The most model requests open at once. */
function mostInFlight(timings: readonly { receivedAt: number; answeredAt: number | undefined }[]): number {
  const edges = timings.flatMap((timing) => [
    [timing.receivedAt, 1],
    [timing.answeredAt ?? Number.POSITIVE_INFINITY, -1],
  ]);
  edges.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let open = 0;
  let most = 0;
  for (const [, change] of edges) {
    open += change as number;
    most = Math.max(most, open);
  }
  return most;
}

async function measure(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  butler: ButlerProcess,
  databaseUrl: string,
  mentions: number,
): Promise<Run> {
  await fakes.reset();
  await fakes.configure({ rateTiers: true, agentSessions: true, modelReply });
  const prefix = `C0BUSY${mentions}X`;
  const sentAt = new Map<string, number>();
  const agent = keepAliveAgent(50);
  const idleRss = residentMemory(butler.service.pid).rss;
  const costs = sampleCosts(butler.service.pid, databaseUrl);
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
  const most = await costs();
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
    inFlight: mostInFlight(model),
    idleRss,
    peakRss: residentMemory(butler.service.pid).peak,
    ...most,
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

/** What the turns in flight cost the process: memory over its idle footprint, sockets, database connections. */
function costRows(runs: readonly Run[]) {
  return runs.map((run) => {
    const added = run.peakRss - run.idleRss;
    return [
      String(run.mentions),
      String(run.inFlight),
      `${megabytes(run.idleRss)} → ${megabytes(run.peakRss)}`,
      run.inFlight > 0 ? `${(added / run.inFlight / 1024).toFixed(0)} KB` : 'n/a',
      String(run.sockets),
      String(run.databaseConnections),
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
      aim: 'Busy workspace, 100 mentions in 50 channels, a model of 4 s a reply: every message reaches the model within 10 s',
      measured: `${hundred.modelRequests}/${hundred.mentions} reached the model, the last after ${milliseconds(toModel)} ms`,
      met: hundred.modelRequests >= hundred.mentions && toModel <= 10_000,
    },
    {
      aim: 'Busy workspace, 100 mentions, a model of 4 s a reply: every reply whole within 30 s, no 429',
      measured: `${hundred.complete}/${hundred.mentions} whole, the last after ${milliseconds(whole)} ms; ${hundred.rateLimited} × 429; peak RSS ${megabytes(hundred.peakRss)}`,
      met: hundred.complete >= hundred.mentions && whole <= 30_000 && hundred.rateLimited === 0,
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
          slackRateTiers: true,
        });
        try {
          runs.push(await measure(context, fakes, butler, databaseUrl, size));
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
    table(
      [
        'mentions',
        'model requests in flight (most)',
        'RSS idle → peak',
        'RSS per turn in flight',
        'sockets (most)',
        'database connections (most)',
      ],
      costRows(runs),
    ),
    '',
    bullets([
      `Each run sends that many mentions as fast as 50 connections take them (a few seconds), each opening a thread, from as many people, in ${channels} channels of one workspace, to a fresh Butler process (src/main.ts, its Slack pacing on; Postgres; its default worker settings: 256 turns in flight) whose Slack app is an agent (sessions on).`,
      `The model streams each reply: ${reply.length} characters in ${modelReply.chunks.length} pieces, one every ${modelReply.chunkDelayMs} ms (4 s a reply).`,
      'Costs: RSS from /proc (VmRSS before the mentions, VmHWM after); per turn in flight = (peak − idle) ÷ the most model requests open at once. Sockets: the process’s open socket descriptors (HTTP clients and servers, database), sampled every 250 ms; database connections: pg_stat_activity rows of its database at the same samples (the sampler’s own left out).',
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
