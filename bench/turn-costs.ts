import { type Aim, type Benchmark, type BenchmarkContext, whilePaused } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { processCpuMilliseconds, processesCpuMilliseconds } from './lib/cpu.js';
import { withBenchDatabase } from './lib/database.js';
import { type FakePlatforms, startFakePlatforms } from './lib/fake-platforms.js';
import { bullets, table } from './lib/markdown.js';
import { type MentionRun, mentionRun, turnsPerSecond } from './lib/mention-load.js';
import { startStatementCounter } from './lib/statement-counter.js';
import { milliseconds, rate, ratio, summarize } from './lib/stats.js';

/**
 * 7. What a turn costs Butler on Postgres, beyond throughput: the statements it sends, the latency it adds
 * at a realistic load (mention → model request, last model token → final platform update), and whether
 * a second process on the same database adds capacity.
 */

const modelReply = 'Deploy 4411 is green in all three regions; nothing needs doing.';
const senders = 1_000;
const realisticRate = 25;
const latencyAimMilliseconds = 50;

function settings(context: BenchmarkContext) {
  return context.quick
    ? { realisticCount: 50, highRate: 200, highCount: 300, drainMilliseconds: 20_000 }
    : { realisticCount: 250, highRate: 800, highCount: 3_000, drainMilliseconds: 60_000 };
}

const butlerOn = (name: string, databaseUrl: string, fakes: FakePlatforms) =>
  startButlerProcess({
    name,
    database: { kind: 'postgres', url: databaseUrl },
    slackApiUrl: fakes.slackUrl,
    modelUrl: fakes.modelUrl,
  });

const eventsUrl = (butler: ButlerProcess) => new URL(`${butler.url}/slack/events`);

/** Mention → the model's request, and the model's last byte → the reply's final update (chat.stopStream). */
async function addedLatency(fakes: FakePlatforms, run: MentionRun) {
  const timings = new Map((await fakes.modelTimings()).map((timing) => [timing.thread, timing]));
  const toModel: number[] = [];
  const toFinal: number[] = [];
  for (const reply of run.replies) {
    const sent = run.sentAt.get(reply.thread);
    const model = timings.get(reply.thread);
    if (sent === undefined || model === undefined) continue;
    toModel.push(model.receivedAt - sent);
    if (reply.doneAt !== undefined && model.answeredAt !== undefined)
      toFinal.push(reply.doneAt - model.answeredAt);
  }
  return { toModel: summarize(toModel), toFinal: summarize(toFinal) };
}

async function statementsPerTurn(context: BenchmarkContext, fakes: FakePlatforms, databaseUrl: string) {
  const { drainMilliseconds } = settings(context);
  const counter = await startStatementCounter(databaseUrl);
  const butler = await butlerOn('Butler (statements counted)', counter.url, fakes);
  try {
    const rows: Array<{ offered: number; turns: number; statements: number }> = [];
    for (const offered of [realisticRate, 400]) {
      await fakes.reset();
      const before = counter.statements();
      const run = await mentionRun({
        fakes,
        urls: [eventsUrl(butler)],
        channel: `CSTMT${offered}`,
        ratePerSecond: offered,
        count: context.quick ? 100 : 1_000,
        senders,
        drainMilliseconds,
      });
      rows.push({
        offered,
        turns: run.completed,
        statements: (counter.statements() - before) / run.completed,
      });
    }
    return rows;
  } finally {
    await butler.stop();
    await counter.close();
  }
}

async function scaleOut(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  first: ButlerProcess,
  second: ButlerProcess,
) {
  const { highRate, highCount, drainMilliseconds } = settings(context);
  const measure = async (butlers: ButlerProcess[], label: string) => {
    await fakes.reset();
    const pids = butlers.map((butler) => butler.service.pid);
    const cpu = () => ({
      own: pids.reduce((total, pid) => total + processCpuMilliseconds(pid), 0),
      postgres: processesCpuMilliseconds('postgres'),
    });
    const before = cpu();
    const run = await mentionRun({
      fakes,
      urls: butlers.map(eventsUrl),
      channel: `CSCALE${butlers.length}`,
      ratePerSecond: highRate,
      count: highCount,
      senders,
      drainMilliseconds,
    });
    const after = cpu();
    context.log(
      `turn-costs: ${label}: ${run.completed}/${run.load.sent} replied, ${rate(turnsPerSecond(run))} turns/s`,
    );
    return {
      label,
      turnsPerSecond: turnsPerSecond(run),
      completed: run.completed,
      sent: run.load.sent,
      cpuOwn: (after.own - before.own) / run.completed,
      cpuPostgres: (after.postgres - before.postgres) / run.completed,
    };
  };
  const one = await whilePaused(second.service.pid, () => measure([first], '1 process'));
  const two = await measure([first, second], '2 processes');
  return { one, two };
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply, slackUsers: senders });
  try {
    return await withBenchDatabase(async (databaseUrl) => {
      const statements = await statementsPerTurn(context, fakes, databaseUrl);
      const [first, second] = await Promise.all([
        butlerOn('Butler (1 of 2)', databaseUrl, fakes),
        butlerOn('Butler (2 of 2)', databaseUrl, fakes),
      ]);
      try {
        const { realisticCount, drainMilliseconds } = settings(context);
        const mentions = {
          fakes,
          urls: [eventsUrl(first)],
          count: realisticCount,
          senders,
          drainMilliseconds,
        };
        const realistic = await whilePaused(second.service.pid, async () => {
          // Not measured: compiles the hot paths, as any process that has served traffic has.
          await mentionRun({ ...mentions, channel: 'CWARM', ratePerSecond: 50 });
          await fakes.reset();
          return mentionRun({
            ...mentions,
            channel: 'CREAL',
            ratePerSecond: realisticRate,
            tagThreads: true,
          });
        });
        const latency = await addedLatency(fakes, realistic);
        const scale = await scaleOut(context, fakes, first, second);
        return report(context, statements, latency, scale);
      } finally {
        await Promise.all([first.stop(), second.stop()]);
      }
    });
  } finally {
    await fakes.stop();
  }
}

function report(
  context: BenchmarkContext,
  statements: Array<{ offered: number; turns: number; statements: number }>,
  latency: Awaited<ReturnType<typeof addedLatency>>,
  scale: Awaited<ReturnType<typeof scaleOut>>,
) {
  const { highRate, highCount } = settings(context);
  const markdown = [
    table(
      ['offered/s', 'turns', 'statements per turn (Butler → Postgres)'],
      statements.map((row) => [String(row.offered), String(row.turns), row.statements.toFixed(1)]),
    ),
    '',
    table(
      ['at 25 turns/s', 'p50 ms', 'p99 ms', 'aim: p99 at most'],
      [
        [
          'mention sent → model request',
          milliseconds(latency.toModel.p50),
          milliseconds(latency.toModel.p99),
          `${latencyAimMilliseconds} ms`,
        ],
        [
          'model’s last token → final platform update',
          milliseconds(latency.toFinal.p50),
          milliseconds(latency.toFinal.p99),
          `${latencyAimMilliseconds} ms`,
        ],
      ],
    ),
    '',
    table(
      [
        'Butler processes on one Postgres',
        'turns/s',
        'replied/sent',
        'vs 1 process',
        'CPU ms per turn: Butler processes',
        'CPU ms per turn: Postgres',
      ],
      [scale.one, scale.two].map((row) => [
        row.label,
        rate(row.turnsPerSecond),
        `${row.completed}/${row.sent}`,
        ratio(row.turnsPerSecond / scale.one.turnsPerSecond),
        milliseconds(row.cpuOwn),
        milliseconds(row.cpuPostgres),
      ]),
    ),
    '',
    bullets([
      'Statements: a TCP proxy in front of Postgres (bench/lib/statement-counter.ts) counts every simple query and every Execute of the extended protocol that Butler sends, idle polling included; 1,000 mentions per rate, each a new thread. Group commit and batched claims make the figure fall as load rises.',
      `Latency at ${realisticRate} turns/s (${settings(context).realisticCount} mentions, each a new thread, after as many unmeasured ones at 50/s; the model answers at once): "mention sent → model request" is from the load generator's send to the fake model receiving the chat request (HTTP, signature check, the inbox commit, the claim, the turn's opening read, users.info); "last token → final update" is from the fake model writing its answer's last byte to the fake Slack API receiving \`chat.stopStream\` (the turn's inflight write, the stop call). Fakes and load generator share the machine's clock.`,
      `Scale-out: ${highCount} mentions offered at ${highRate}/s, alternating between the processes (a load balancer's round robin), against one Postgres; the single-process row runs with the second process paused. This machine has 2 cores, shared by the Butler processes, Postgres, the fakes and the load generator: a second process can only add capacity where one process leaves a core idle (waiting on Postgres or the network), not by adding cores.`,
    ]),
  ].join('\n');
  const aims: Aim[] = [
    {
      aim: `Latency added at ${realisticRate} turns/s: mention → model request p99 at most ${latencyAimMilliseconds} ms`,
      measured: `p50 ${milliseconds(latency.toModel.p50)} ms, p99 ${milliseconds(latency.toModel.p99)} ms`,
      met: latency.toModel.p99 <= latencyAimMilliseconds,
    },
    {
      aim: `Latency added at ${realisticRate} turns/s: last model token → final platform update p99 at most ${latencyAimMilliseconds} ms`,
      measured: `p50 ${milliseconds(latency.toFinal.p50)} ms, p99 ${milliseconds(latency.toFinal.p99)} ms`,
      met: latency.toFinal.p99 <= latencyAimMilliseconds,
    },
    {
      aim: 'Scale-out: 2 Butler processes on one Postgres give more turns/s than 1',
      measured: `${rate(scale.two.turnsPerSecond)} vs ${rate(scale.one.turnsPerSecond)} turns/s (${ratio(scale.two.turnsPerSecond / scale.one.turnsPerSecond)}) on 2 cores`,
      met: scale.two.turnsPerSecond > scale.one.turnsPerSecond,
    },
  ];
  return { markdown, aims };
}

export const turnCostsBenchmark: Benchmark = {
  name: 'turn-costs',
  title: '7. Turn costs: statements per turn, latency added at 25 turns/s, two processes',
  run,
};
