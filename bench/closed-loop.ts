import {
  type Aim,
  type Benchmark,
  type BenchmarkContext,
  profilingFlags,
  whilePaused,
} from './lib/benchmark.js';
import { startButlerProcess } from './lib/butler-process.js';
import { peerLabel, startChatSdkPeer } from './lib/chat-sdk-peer.js';
import { type ClosedMentionRun, closedMentionLoop, type ThreadTiming } from './lib/closed-mentions.js';
import { withBenchDatabase } from './lib/database.js';
import { type FakePlatforms, type ModelTiming, startFakePlatforms } from './lib/fake-platforms.js';
import { bullets, table } from './lib/markdown.js';
import type { ChildService } from './lib/processes.js';
import { milliseconds, rate, summarize } from './lib/stats.js';

/**
 * Beside the open-loop end-to-end run: a closed loop (a fixed number of mentions in flight, the next sent when
 * a thread got its first reply call, or its complete reply), Butler and the peer measured the same way, with
 * where each turn's time goes: acknowledgement, the model request, the first reply call, the complete reply.
 */

const modelReply = 'Deploy 4411 is green in all three regions; nothing needs doing.';
/** The model answers at once, in 5 chunks (the conditions). */
const modelChunks = ['Deploy 4411 ', 'is green ', 'in all three regions; ', 'nothing needs ', 'doing.'];
const senders = 1_000;
/**
 * The mentions are spread over this many channels of one workspace (a company-wide rollout): Slack allows a bot
 * about one post a second per channel, so in one channel a bot that keeps to it answers about one mention a
 * second, whatever its own speed; across 500 channels that limit is out of the way and the loop measures the
 * bots' own work.
 */
const channels = 500;

interface Target {
  label: string;
  short: string;
  service: ChildService;
  url: URL;
}

interface LoopResult {
  target: Target;
  advanceOn: 'opened' | 'done';
  run: ClosedMentionRun;
  model: Map<string, ModelTiming>;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { total: 300, inFlight: 20, warmup: 100, rounds: 1 }
    : { total: 1_500, inFlight: 50, warmup: 500, rounds: 3 };
}

async function measure(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  target: Target,
  advanceOn: 'opened' | 'done',
  mentions = settings(context).total,
): Promise<LoopResult> {
  const { inFlight } = settings(context);
  const total = mentions;
  await fakes.reset();
  await fakes.configure({ modelReply: { text: modelReply, chunks: modelChunks } });
  const channel = `C0CL${target.short}${advanceOn === 'opened' ? 'O' : 'D'}${total}`;
  const run = await closedMentionLoop({
    fakes,
    url: target.url,
    channel,
    channels,
    total,
    inFlight,
    advanceOn,
    senders,
    waitMilliseconds: 30_000,
    drainMilliseconds: 30_000,
  });
  const model = new Map((await fakes.modelTimings()).map((timing) => [timing.thread, timing]));
  const result = { target, advanceOn, run, model };
  context.log(
    `closed-loop: ${target.label}, next mention on ${advanceOn}: ${rate(turnsPerSecond(result))} turns/s, ${run.timedOut} timed out`,
  );
  return result;
}

function turnsPerSecond(result: LoopResult): number {
  const { run } = result;
  return (run.threads.size - run.timedOut) / ((run.endedAt - run.startedAt) / 1000);
}

/** p50 / p99 of `to − from` over the threads where both are known. */
function span(
  result: LoopResult,
  from: (thread: ThreadTiming, model: ModelTiming | undefined) => number | undefined,
  to: (thread: ThreadTiming, model: ModelTiming | undefined) => number | undefined,
): string {
  const values = [...result.run.threads.entries()].flatMap(([ts, thread]) => {
    const model = result.model.get(ts);
    const [start, end] = [from(thread, model), to(thread, model)];
    return start === undefined || end === undefined ? [] : [end - start];
  });
  const summary = summarize(values);
  return `${milliseconds(summary.p50)} / ${milliseconds(summary.p99)}`;
}

function rows(results: readonly LoopResult[]) {
  const sent = (thread: ThreadTiming) => thread.sentAt;
  const acknowledged = (thread: ThreadTiming) => thread.acknowledgedAt;
  const modelAsked = (_thread: ThreadTiming, model: ModelTiming | undefined) => model?.receivedAt;
  const opened = (thread: ThreadTiming) => thread.openedAt;
  const done = (thread: ThreadTiming) => thread.doneAt;
  return results.map((result) => [
    result.target.label,
    result.advanceOn === 'opened' ? 'first reply call' : 'complete reply',
    rate(turnsPerSecond(result)),
    span(result, sent, acknowledged),
    span(result, sent, modelAsked),
    span(result, modelAsked, opened),
    span(result, sent, opened),
    span(result, sent, done),
  ]);
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply, slackUsers: senders });
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    return await withBenchDatabase(async (databaseUrl) => {
      const butler = (name: string, config: Record<string, unknown>, url: string, paced = false) =>
        startButlerProcess({
          name,
          database: { kind: 'postgres', url },
          slackApiUrl: fakes.slackUrl,
          modelUrl: fakes.modelUrl,
          config,
          slackRateTiers: paced,
          nodeFlags: profilingFlags(context, name.replace(/\W+/g, '-')),
        });
      return withBenchDatabase(async (wideDatabaseUrl) => {
        const [standard, wide, peer] = await Promise.all([
          butler('Butler (Postgres, paced)', {}, databaseUrl, true),
          butler('Butler (Postgres, pacing off)', {}, wideDatabaseUrl),
          startChatSdkPeer(fakes),
        ]);
        started.push(standard, wide, peer);
        const targets: Target[] = [
          {
            label: peerLabel,
            short: 'PEER',
            service: peer.service,
            url: new URL(`${peer.url}/slack/events`),
          },
          {
            label: 'Butler as users run it: pacing on, Postgres, default worker settings',
            short: 'PG',
            service: standard.service,
            url: new URL(`${standard.url}/slack/events`),
          },
          {
            label: 'Butler, pacing off, Postgres',
            short: 'WIDE',
            service: wide.service,
            url: new URL(`${wide.url}/slack/events`),
          },
        ];
        const results: LoopResult[] = [];
        const alone = <T>(target: Target, work: () => Promise<T>) =>
          whilePaused(
            targets.filter((other) => other !== target).map((other) => other.service.pid),
            work,
          );
        // A warm-up round each (JIT, connections, caches), not reported.
        for (const target of targets)
          await alone(target, () => measure(context, fakes, target, 'done', settings(context).warmup));
        // Rounds alternate the targets' order, so none always runs first or last.
        for (let round = 0; round < settings(context).rounds; round++) {
          for (const [index, advanceOn] of (['opened', 'done'] as const).entries()) {
            const order = (round + index) % 2 === 0 ? targets : [...targets].reverse();
            for (const target of order)
              results.push(await alone(target, () => measure(context, fakes, target, advanceOn)));
          }
        }
        const medians = (['opened', 'done'] as const).flatMap((advanceOn) =>
          targets.map((target) => medianRun(results, target, advanceOn)),
        );
        const [peerTarget, paced] = targets as [Target, Target, Target];
        return { markdown: report(context, medians, results), aims: aims(medians, peerTarget, paced) };
      });
    });
  } finally {
    for (const service of started.reverse()) await service.stop();
    await fakes.stop();
  }
}

/** The run of `target` whose turns/s is the median of its rounds. */
function medianRun(results: readonly LoopResult[], target: Target, advanceOn: 'opened' | 'done'): LoopResult {
  const runs = results
    .filter((result) => result.target === target && result.advanceOn === advanceOn)
    .sort((left, right) => turnsPerSecond(left) - turnsPerSecond(right));
  return runs[Math.floor(runs.length / 2)] as LoopResult;
}

function aims(medians: readonly LoopResult[], peer: Target, butler: Target): Aim[] {
  const of = (target: Target) =>
    medians.find((result) => result.target === target && result.advanceOn === 'opened') as LoopResult;
  const ratio = turnsPerSecond(of(butler)) / turnsPerSecond(of(peer));
  return [
    {
      aim: 'Closed loop (1,500 mentions over 500 channels, 50 in flight, to the first reply call): Butler as users run it at least the Chat SDK peer',
      measured: `${rate(turnsPerSecond(of(butler)))} vs ${rate(turnsPerSecond(of(peer)))} turns/s (${ratio.toFixed(2)}×), medians of the rounds`,
      met: ratio >= 1,
    },
  ];
}

function roundsLine(results: readonly LoopResult[]): string {
  const targets = [...new Set(results.map((result) => result.target))];
  return (['opened', 'done'] as const)
    .map((advanceOn) => {
      const each = targets.map((target) => {
        const rates = results
          .filter((result) => result.target === target && result.advanceOn === advanceOn)
          .map((result) => rate(turnsPerSecond(result)));
        return `${target.label}: ${rates.join(', ')}`;
      });
      return `to the ${advanceOn === 'opened' ? 'first reply call' : 'complete reply'}: ${each.join('; ')}`;
    })
    .join('. ');
}

function report(
  context: BenchmarkContext,
  results: readonly LoopResult[],
  rounds: readonly LoopResult[],
): string {
  const { total, inFlight } = settings(context);
  return [
    table(
      [
        'target',
        'next mention after',
        'turns/s',
        'sent → ack p50 / p99 ms',
        'sent → model request',
        'model request → first reply call',
        'sent → first reply call',
        'sent → complete reply',
      ],
      rows(results),
    ),
    '',
    bullets([
      `Each row is the target's median round of ${settings(context).rounds}; turns/s of every round, in order: ${roundsLine(rounds)}.`,
      `Closed loop: ${total} mentions (each opening a thread, from ${senders} people, spread over ${channels} channels of one workspace), ${inFlight} in flight; each sender sends its next mention when its thread got its first reply call (any \`chat.startStream\` or \`chat.postMessage\`, text or not), or its complete reply (\`chat.stopStream\`). turns/s = mentions / time until the last one got it.`,
      "The loop does not wait for acknowledgements (Slack sends the next event regardless). The model (a fake) answers at once with one short sentence in 5 chunks. Times are from the fake Slack API and the fake model (other processes on the same machine); the other targets are paused (SIGSTOP) meanwhile, after a warm-up round each; the targets' order alternates between the two loops.",
      "Butler acknowledges once the mention is stored; a worker slot then claims it, prepares it (sender's name) and asks the model; the reply opens with the model's first text. 'Pacing on' is src/main.ts as users run it (Slack's tiers paced; past 20 streams a minute a reply is posted whole); 'pacing off' measures Butler's own work. The fake Slack enforces nothing, as for the peer. The peer handles the mention before it acknowledges, and its Slack SDK streamer buffers 256 characters before its first call (`chat.startStream`), so with this short answer its first reply call comes once the model's answer is complete.",
    ]),
  ].join('\n');
}

export const closedLoopBenchmark: Benchmark = {
  name: 'closed-loop',
  title: 'Closed loop: mentions in flight, to the first reply call and to the complete reply',
  run,
};
