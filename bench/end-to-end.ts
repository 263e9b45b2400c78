import { type Aim, type Benchmark, type BenchmarkContext, profilingFlags } from './lib/benchmark.js';
import { startBenchServer, startButlerProcess } from './lib/butler-process.js';
import { peerLabel, startChatSdkPeer } from './lib/chat-sdk-peer.js';
import { processCpuMilliseconds, processesCpuMilliseconds } from './lib/cpu.js';
import { withBenchDatabase } from './lib/database.js';
import { beforeIssue14, checkoutEarlierButler, type EarlierCheckout } from './lib/earlier-butler.js';
import { type FakePlatforms, startFakePlatforms } from './lib/fake-platforms.js';
import { bullets, table } from './lib/markdown.js';
import { mentionRun, turnsPerSecond } from './lib/mention-load.js';
import { slackSecrets } from './lib/platform-requests.js';
import type { ChildService } from './lib/processes.js';
import { milliseconds, rate, ratio, summarize } from './lib/stats.js';

/**
 * 2. End to end: a mention goes in, the reply comes out at the fake Slack API. Open loop at fixed offered
 * rates (the generator never waits for replies), against Butler on Postgres, Butler on PGlite, the peer
 * (a Chat SDK + AI SDK bot streaming the model's reply, in-memory state) and a bare Bolt app that
 * acknowledges and calls chat.postMessage in its listener. The model answers at once.
 */

const modelReply = 'Deploy 4411 is green in all three regions; nothing needs doing.';

const senders = 1_000;

interface Target {
  label: string;
  short: string;
  service: ChildService;
  url: URL;
}

interface RunResult {
  target: Target;
  offered: number;
  sent: number;
  acknowledged: number;
  completed: number;
  turnsPerSecond: number;
  latencies: number[];
  firstTextLatencies: number[];
  /** CPU milliseconds per completed turn: the target's own process, and the Postgres server's processes. */
  cpuPerTurn: { own: number; postgres: number };
}

const cpuReading = (target: Target) => ({
  own: processCpuMilliseconds(target.service.pid),
  postgres: processesCpuMilliseconds('postgres'),
});

function settings(context: BenchmarkContext) {
  return context.quick
    ? { rates: [150], longestMilliseconds: 1_500, mostSends: 225, drainMilliseconds: 20_000 }
    : {
        rates: [25, 100, 400, 1_600],
        longestMilliseconds: 10_000,
        mostSends: 2_000,
        drainMilliseconds: 60_000,
      };
}

async function measure(context: BenchmarkContext, fakes: FakePlatforms, target: Target, offered: number) {
  const { longestMilliseconds, mostSends, drainMilliseconds } = settings(context);
  // High rates run shorter, so that a backlog drains in bounded time.
  const durationMilliseconds = Math.min(longestMilliseconds, (mostSends / offered) * 1000);
  const channel = `C0${target.short}${offered}`;
  await fakes.reset();
  const cpuBefore = cpuReading(target);
  const run = await mentionRun({
    fakes,
    urls: [target.url],
    channel,
    ratePerSecond: offered,
    count: Math.round((offered * durationMilliseconds) / 1000),
    senders,
    drainMilliseconds,
  });
  const cpuAfter = cpuReading(target);
  const latencies: number[] = [];
  const firstTextLatencies: number[] = [];
  for (const reply of run.replies) {
    const sent = run.sentAt.get(reply.thread);
    if (sent === undefined || reply.doneAt === undefined) continue;
    latencies.push(reply.doneAt - sent);
    if (reply.firstAt !== undefined) firstTextLatencies.push(reply.firstAt - sent);
  }
  const result: RunResult = {
    target,
    offered,
    sent: run.load.sent,
    acknowledged: run.load.acknowledged,
    completed: latencies.length,
    turnsPerSecond: turnsPerSecond(run),
    latencies,
    firstTextLatencies,
    cpuPerTurn: {
      own: (cpuAfter.own - cpuBefore.own) / latencies.length,
      postgres: (cpuAfter.postgres - cpuBefore.postgres) / latencies.length,
    },
  };
  context.log(
    `end-to-end: ${target.label} at ${offered}/s: ${result.completed}/${result.sent} replied, ${rate(result.turnsPerSecond)} turns/s`,
  );
  return result;
}

/** Pauses every target but `active` (SIGSTOP) so idle or draining ones take no CPU from the measured one. */
async function isolated<T>(targets: readonly Target[], active: Target, work: () => Promise<T>): Promise<T> {
  const others = targets.filter((target) => target !== active);
  for (const other of others) process.kill(other.service.pid, 'SIGSTOP');
  try {
    return await work();
  } finally {
    for (const other of others) process.kill(other.service.pid, 'SIGCONT');
  }
}

function tableRows(results: readonly RunResult[]) {
  return results.map((result) => {
    const same = (short: string) =>
      results.find((other) => other.offered === result.offered && other.target.short === short);
    const latency = summarize(result.latencies);
    const firstText = summarize(result.firstTextLatencies);
    const versus = (other: RunResult | undefined) =>
      other
        ? [
            ratio(result.turnsPerSecond / other.turnsPerSecond),
            ratio(latency.p99 / summarize(other.latencies).p99),
          ]
        : ['n/a', 'n/a'];
    return [
      result.target.label,
      String(result.offered),
      rate(result.turnsPerSecond),
      `${result.completed}/${result.sent}`,
      milliseconds(firstText.p50),
      milliseconds(latency.p50),
      milliseconds(latency.p99),
      ...versus(same('BARE')),
      ...versus(same('PEER')),
      milliseconds(result.cpuPerTurn.own),
      ['PG', 'OLD'].includes(result.target.short) ? milliseconds(result.cpuPerTurn.postgres) : '—',
    ];
  });
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply, slackUsers: senders });
  const earlier = await checkoutEarlierButler(beforeIssue14);
  if ('unavailable' in earlier) context.log(`end-to-end: no "before" target: ${earlier.unavailable}`);
  try {
    // The earlier Butler gets a database of its own: processes sharing one take each other's work.
    return await withBenchDatabase((databaseUrl) =>
      withBenchDatabase(async (earlierDatabaseUrl) => {
        const started: Array<{ stop(): Promise<void> }> = [];
        try {
          const before = 'unavailable' in earlier ? undefined : { earlier, databaseUrl: earlierDatabaseUrl };
          return await compareTargets(context, fakes, databaseUrl, before, started);
        } finally {
          for (const service of started.reverse()) await service.stop();
        }
      }),
    );
  } finally {
    if (!('unavailable' in earlier)) await earlier.remove();
    await fakes.stop();
  }
}

async function compareTargets(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  databaseUrl: string,
  before: { earlier: EarlierCheckout; databaseUrl: string } | undefined,
  started: Array<{ stop(): Promise<void> }>,
) {
  const remember = <T extends { stop(): Promise<void> }>(service: T): T => {
    started.push(service);
    return service;
  };
  // Started together: each start is mostly waiting (module loading, migrations).
  const [butlerPostgres, butlerPglite, bare, peer] = await Promise.all([
    startButlerProcess({
      name: 'Butler (Postgres)',
      database: { kind: 'postgres', url: databaseUrl },
      slackApiUrl: fakes.slackUrl,
      modelUrl: fakes.modelUrl,
      nodeFlags: profilingFlags(context, 'end-to-end-postgres'),
    }).then(remember),
    startButlerProcess({
      name: 'Butler (PGlite)',
      database: { kind: 'pglite' },
      slackApiUrl: fakes.slackUrl,
      modelUrl: fakes.modelUrl,
      nodeFlags: profilingFlags(context, 'end-to-end-pglite'),
    }).then(remember),
    startBenchServer({
      name: 'bare Bolt (echo)',
      script: 'bench/servers/bare-bolt.ts',
      arguments: ['echo'],
      env: {
        SLACK_SIGNING_SECRET: slackSecrets.signingSecret,
        SLACK_BOT_TOKEN: slackSecrets.botToken,
        SLACK_API_URL: fakes.slackUrl,
        BENCH_REPLY: modelReply,
      },
      readyPath: '/healthz',
    }).then(remember),
    startChatSdkPeer(fakes).then(remember),
  ]);
  const butlerBefore = before
    ? remember(
        await startButlerProcess({
          name: `Butler before issue 14 (${before.earlier.commit})`,
          database: { kind: 'postgres', url: before.databaseUrl },
          slackApiUrl: fakes.slackUrl,
          modelUrl: fakes.modelUrl,
          checkout: before.earlier.directory,
        }),
      )
    : undefined;
  const targets: Target[] = [
    {
      label: 'bare Bolt echo',
      short: 'BARE',
      service: bare.service,
      url: new URL(`${bare.url}/slack/events`),
    },
    {
      label: peerLabel,
      short: 'PEER',
      service: peer.service,
      url: new URL(`${peer.url}/slack/events`),
    },
    {
      label: 'Butler, Postgres',
      short: 'PG',
      service: butlerPostgres.service,
      url: new URL(`${butlerPostgres.url}/slack/events`),
    },
    {
      label: 'Butler, PGlite',
      short: 'LITE',
      service: butlerPglite.service,
      url: new URL(`${butlerPglite.url}/slack/events`),
    },
    ...(butlerBefore && before
      ? [
          {
            label: `Butler before issue 14 (${before.earlier.commit}), Postgres`,
            short: 'OLD',
            service: butlerBefore.service,
            url: new URL(`${butlerBefore.url}/slack/events`),
          },
        ]
      : []),
  ];
  const results: RunResult[] = [];
  const { rates, longestMilliseconds, mostSends, drainMilliseconds } = settings(context);
  for (const [index, offered] of rates.entries()) {
    const order = index % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      results.push(await isolated(targets, target, () => measure(context, fakes, target, offered)));
    }
  }
  results.sort(
    (left, right) =>
      left.offered - right.offered || targets.indexOf(left.target) - targets.indexOf(right.target),
  );
  const capacity = (target: Target) =>
    Math.max(...results.filter((result) => result.target === target).map((result) => result.turnsPerSecond));
  const byShort = (short: string) => targets.find((target) => target.short === short) as Target;
  const bareCapacity = capacity(byShort('BARE'));
  const peerCapacity = capacity(byShort('PEER'));
  const markdown = [
    table(
      [
        'target',
        'most turns/s reached (any offered rate)',
        'vs bare Bolt echo',
        'vs Chat SDK peer',
        'vs Butler before issue 14',
      ],
      targets.map((target) => [
        target.label,
        rate(capacity(target)),
        ratio(capacity(target) / bareCapacity),
        ratio(capacity(target) / peerCapacity),
        targets.some((other) => other.short === 'OLD')
          ? ratio(capacity(target) / capacity(byShort('OLD')))
          : 'n/a',
      ]),
    ),
    '',
    table(
      [
        'target',
        'offered/s',
        'turns/s',
        'replied/sent',
        'first text p50 ms',
        'reply done p50 ms',
        'reply done p99 ms',
        'turns/s vs bare',
        'p99 vs bare',
        'turns/s vs peer',
        'p99 vs peer',
        'CPU ms per turn: target process',
        'CPU ms per turn: Postgres server',
      ],
      tableRows(results),
    ),
    '',
    bullets([
      `Offered load: open loop, mentions sent on a fixed schedule (each opening a new thread) for ${longestMilliseconds / 1000} s per rate and target, ` +
        `or ${mostSends} mentions at the highest rates; replies counted until all arrived or ${drainMilliseconds / 1000} s after the last send. ` +
        'turns/s = replies / (last reply − first send): it equals the offered rate while a target keeps up, and shows its capacity once it does not. ' +
        'A bare Bolt echo that keeps up with the highest rate has more capacity than shown.',
      'Latency: mention sent → reply complete at the fake Slack API (Butler and the peer: `chat.stopStream` of their streamed replies; bare Bolt: its `chat.postMessage`). "first text": the first call carrying reply text (the peer\'s Slack SDK streamer opens the stream empty and buffers up to 256 characters, so its text arrives with `chat.stopStream`).',
      'Butler runs its default config (8 worker slots, Slack streaming, status reaction, users.info); the model (a fake) answers at once. PGlite runs on disk.',
      "The peer (bench/servers/chat-sdk-peer.ts) is the closest TypeScript bot doing Butler's basic work, as the docs start one: `chat` + `@chat-adapter/slack` with in-memory state (`@chat-adapter/state-memory`); on a new mention it subscribes to the thread and posts `streamText(...).fullStream` (`ai` 6, `@ai-sdk/openai` chat completions). It keeps nothing durable and makes no status calls. Ratios \"vs peer\" divide the row's figure by the peer's at the same offered rate.",
      'Targets take turns per rate; the others are paused (SIGSTOP) meanwhile.',
      `"Butler before issue 14" is the same Butler at commit ${beforeIssue14} (before the work on statements per turn, group commit and the deferred working indicator), checked out beside this one with \`git worktree\` and run the same way on a database of its own: before and after measured in one run, since this machine's speed varies between runs.`,
      'CPU per turn: user + system time (from /proc) of the target process, and of all Postgres server processes for the Postgres target, from the first send until the replies were counted, divided by the replies. It is steadier than turns/s on a shared machine: it does not count waiting for the other core. The load generator and the fakes run in other processes.',
    ]),
  ].join('\n');
  const butlerCapacity = capacity(byShort('PG'));
  const aims: Aim[] = [
    {
      aim: "End to end (Postgres): turns/s at least the Chat SDK + AI SDK peer's (issue 14)",
      measured: `${rate(butlerCapacity)} vs ${rate(peerCapacity)}${keptUp(results, byShort('PEER')) ? '+' : ''} turns/s (${ratio(butlerCapacity / peerCapacity)})`,
      met: butlerCapacity >= peerCapacity,
    },
    {
      aim: 'End to end (Postgres): turns/s at least half of the bare Bolt echo',
      measured: `${rate(butlerCapacity)} vs ${rate(bareCapacity)}${keptUp(results, byShort('BARE')) ? '+' : ''} turns/s (${ratio(butlerCapacity / bareCapacity)})`,
      met: butlerCapacity >= bareCapacity / 2,
    },
  ];
  aims.push(cpuAim(results));
  return { markdown, aims };
}

/** Issue 14's aim: CPU per turn (Butler and Postgres) at 400/s at most half of what it was before its work. */
function cpuAim(results: readonly RunResult[]): Aim {
  const at = (short: string) =>
    results.find((result) => result.target.short === short && result.offered === 400)?.cpuPerTurn;
  const [now, then] = [at('PG'), at('OLD')];
  const aim =
    'CPU per turn at 400/s (Butler + Postgres) at most half of the Butler before issue 14, same run';
  if (!now || !then) return { aim, measured: 'not measured (no earlier checkout)', met: false };
  const total = (cpu: { own: number; postgres: number }) => cpu.own + cpu.postgres;
  return {
    aim,
    measured: `${milliseconds(now.own)} + ${milliseconds(now.postgres)} ms vs ${milliseconds(then.own)} + ${milliseconds(then.postgres)} ms before (${ratio(total(now) / total(then))})`,
    met: total(now) <= total(then) / 2,
  };
}

/** Whether a target kept up with the highest offered rate (its capacity is then higher than measured). */
function keptUp(results: readonly RunResult[], target: Target): boolean {
  const highest = results.filter((result) => result.target === target).at(-1);
  return highest !== undefined && highest.turnsPerSecond >= highest.offered * 0.95;
}

export const endToEndBenchmark: Benchmark = {
  name: 'end-to-end',
  title: '2. End to end: mention → reply at a steady offered load',
  run,
};
