import { type Aim, type Benchmark, type BenchmarkContext, profilingFlags } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { query, withBenchDatabase } from './lib/database.js';
import { type FakePlatforms, startFakePlatforms } from './lib/fake-platforms.js';
import { keepAliveAgent, openLoop, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { slackMention, slackUserId } from './lib/platform-requests.js';
import { residentMemory, waitForMessage } from './lib/processes.js';
import { megabytes, thousands } from './lib/stats.js';

/**
 * 5. Memory: Butler's resident memory after N distinct conversations have each had a turn (a Slack
 * mention opening its own thread, answered through the fake model and fake Slack API), measured from
 * outside (/proc) and inside (V8 heap, through a preloaded IPC probe), before and after a full GC.
 */

const modelReply = 'Deploy 4411 is green in all three regions; nothing needs doing.';
const senders = 1_000;

interface Snapshot {
  label: string;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { conversations: 300, ratePerSecond: 100 }
    : { conversations: 10_000, ratePerSecond: 70 };
}

async function snapshot(butler: ButlerProcess, label: string, collect: boolean): Promise<Snapshot> {
  const answer = waitForMessage<{ usage: NodeJS.MemoryUsage }>(butler.service, 'memory', 30_000);
  butler.service.child.send({ type: 'memory', collect });
  const { usage } = await answer;
  return {
    label,
    rss: residentMemory(butler.service.pid).rss,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    external: usage.external,
  };
}

async function openEvents(databaseUrl: string): Promise<number> {
  const [row] = await query<{ open: number }>(
    databaseUrl,
    "select count(*)::int as open from inbound_events where status in ('pending', 'claimed')",
  );
  return row?.open ?? 0;
}

async function converse(context: BenchmarkContext, butler: ButlerProcess, databaseUrl: string) {
  const { conversations, ratePerSecond } = settings(context);
  const agent = keepAliveAgent(64);
  const url = new URL(`${butler.url}/slack/events`);
  let sender = 0;
  const load = await openLoop({
    ratePerSecond,
    durationMilliseconds: (conversations / ratePerSecond) * 1000,
    send: () =>
      post(agent, url, slackMention({ channel: 'C0MEMORY', user: slackUserId(sender++ % senders) }).request),
  });
  agent.destroy();
  context.log(
    `memory: ${load.acknowledged} mentions acknowledged; waiting for the worker to answer them all`,
  );
  const deadline = Date.now() + 600_000;
  while ((await openEvents(databaseUrl)) > 0) {
    if (Date.now() > deadline) throw new Error('Butler did not answer every conversation within 10 minutes');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return load.acknowledged;
}

async function measure(context: BenchmarkContext, fakes: FakePlatforms, databaseUrl: string) {
  const butler = await startButlerProcess({
    name: 'Butler (memory)',
    database: { kind: 'postgres', url: databaseUrl },
    slackApiUrl: fakes.slackUrl,
    modelUrl: fakes.modelUrl,
    nodeFlags: ['--expose-gc', ...profilingFlags(context, 'memory')],
    preload: ['./bench/servers/memory-probe.ts'],
    ipc: true,
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, context.quick ? 500 : 2000));
    const started = await snapshot(butler, 'started, idle', true);
    const acknowledged = await converse(context, butler, databaseUrl);
    const [row] = await query<{ conversations: number; replies: number }>(
      databaseUrl,
      "select (select count(*)::int from conversations) as conversations, (select count(*)::int from messages where role = 'assistant') as replies",
    );
    const after = await snapshot(butler, 'after the last turn', false);
    const collected = await snapshot(butler, 'after the last turn, full GC', true);
    const pause = context.quick ? 1 : 5;
    await new Promise((resolve) => setTimeout(resolve, pause * 1000));
    const settled = await snapshot(butler, `${pause} s later, full GC`, true);
    const peak = residentMemory(butler.service.pid).peak;
    return {
      acknowledged,
      conversations: row?.conversations ?? 0,
      replies: row?.replies ?? 0,
      peak,
      snapshots: [started, after, collected, settled],
    };
  } finally {
    await butler.stop();
  }
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply, slackUsers: senders });
  try {
    const result = await withBenchDatabase((databaseUrl) => measure(context, fakes, databaseUrl));
    const { ratePerSecond } = settings(context);
    const first = result.snapshots[0];
    const last = result.snapshots.at(-1);
    const perConversation =
      first && last && result.conversations > 0
        ? (last.heapUsed - first.heapUsed) / result.conversations
        : Number.NaN;
    const markdown = [
      table(
        ['moment', 'conversations', 'RSS', 'V8 heap used', 'V8 heap total', 'external'],
        result.snapshots.map((snapshot, index) => [
          snapshot.label,
          index === 0 ? '0' : thousands(result.conversations),
          megabytes(snapshot.rss),
          megabytes(snapshot.heapUsed),
          megabytes(snapshot.heapTotal),
          megabytes(snapshot.external),
        ]),
      ),
      '',
      bullets([
        `Peak RSS during the run (VmHWM): **${megabytes(result.peak)}**. V8 heap kept per conversation (heap used after a full GC, last − first row): ${Number.isFinite(perConversation) ? `${(perConversation / 1024).toFixed(2)} KB` : 'n/a'}.`,
        `${thousands(result.acknowledged)} mentions sent at ${ratePerSecond}/s (open loop), each opening its own thread; ` +
          `afterwards the database holds ${thousands(result.conversations)} conversations and ${thousands(result.replies)} replies.`,
        'Butler on Postgres with its default config, started with `--expose-gc` and a preloaded probe (bench/servers/memory-probe.ts) that reports `process.memoryUsage()` over IPC; RSS is read from /proc.',
      ]),
    ].join('\n');
    const settledRss = last?.rss ?? Number.NaN;
    const aims: Aim[] = [
      {
        aim: `Memory: under 250 MB resident with ${thousands(result.conversations)} conversations`,
        measured: `${megabytes(settledRss)} at rest after the last turn (started at ${megabytes(first?.rss ?? Number.NaN)}); peak ${megabytes(result.peak)} while answering`,
        met: settledRss < 250 * 1024 * 1024,
      },
    ];
    return { markdown, aims };
  } finally {
    await fakes.stop();
  }
}

export const memoryBenchmark: Benchmark = {
  name: 'memory',
  title: '5. Memory: resident memory after many conversations',
  run,
};
