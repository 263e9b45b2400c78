import type { Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { withBenchDatabase } from './lib/database.js';
import { checkoutEarlierButler, type EarlierCheckout } from './lib/earlier-butler.js';
import { type FakePlatforms, repliesInChannels, startFakePlatforms } from './lib/fake-platforms.js';
import { keepAliveAgent, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { freshTs, slackMention, slackUserId } from './lib/platform-requests.js';
import { milliseconds, summarize } from './lib/stats.js';

/**
 * Many long replies at once in one workspace, against a fake Slack that enforces the rate tiers as Slack does
 * (per method per workspace, 429 with Retry-After: tests/helpers/fake-slack-rate-tiers.ts). Butler as it is,
 * and Butler before issue 22's pacing (checked out beside it), each in a fresh process per run.
 */

/** The commit before issue 22's pacing work: the "before" of these figures. */
const beforeIssue22 = '14d211e';

const channels = 10;
const paragraph = (index: number) =>
  `${index + 1}. Check the service's health endpoint, then its error rate and latency over the last hour. `;
/** About 4,000 characters, streamed in 50-character pieces every 100 ms: 8 seconds of model output. */
const longReply = Array.from({ length: 40 }, (_, index) => paragraph(index)).join('\n');
const modelReply = {
  text: longReply,
  chunks: longReply.match(/[\s\S]{1,50}/g) ?? [],
  chunkDelayMs: 100,
};

interface Run {
  target: string;
  replies: number;
  sent: number;
  completed: number;
  rateLimited: number;
  streamed: number;
  firstText: number[];
  complete: number[];
  seconds: number;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { sizes: [30], drainMilliseconds: 60_000 }
    : { sizes: [30, 100], drainMilliseconds: 240_000 };
}

async function measure(
  context: BenchmarkContext,
  fakes: FakePlatforms,
  butler: ButlerProcess,
  target: string,
  size: number,
): Promise<Run> {
  const { drainMilliseconds } = settings(context);
  await fakes.reset();
  await fakes.configure({ rateTiers: true, modelReply });
  const prefix = `C0${target === 'now' ? 'N' : 'B'}${size}X`;
  const agent = keepAliveAgent(size);
  const sentAt = new Map<string, number>();
  const started = Date.now();
  // All at once, each opening a thread, from as many people in ten channels: one busy workspace.
  const answers = await Promise.all(
    Array.from({ length: size }, (_, index) => {
      const ts = freshTs();
      sentAt.set(ts, Date.now());
      const mention = slackMention({ channel: `${prefix}${index % channels}`, user: slackUserId(index), ts });
      return post(agent, new URL(`${butler.url}/slack/events`), mention.request);
    }),
  );
  agent.destroy();
  const acknowledged = answers.filter((answer) => answer.status === 200).length;
  const deadline = Date.now() + drainMilliseconds;
  let replies = await repliesInChannels(fakes, prefix, channels);
  const done = () => replies.filter((reply) => reply.doneAt !== undefined).length;
  while (done() < acknowledged && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    replies = await repliesInChannels(fakes, prefix, channels);
  }
  const counts = await fakes.counts();
  const rateLimited = Object.entries(counts)
    .filter(([key]) => key.startsWith('slack 429 '))
    .reduce((sum, [, count]) => sum + count, 0);
  const since = (at: number | undefined, thread: string) => {
    const sent = sentAt.get(thread);
    return at === undefined || sent === undefined ? [] : [at - sent];
  };
  const run: Run = {
    target,
    replies: size,
    sent: size,
    completed: done(),
    rateLimited,
    streamed: counts['slack chat.startStream'] ?? 0,
    firstText: replies.flatMap((reply) => since(reply.firstAt, reply.thread)),
    complete: replies.flatMap((reply) => since(reply.doneAt, reply.thread)),
    seconds: (Math.max(started, ...replies.map((reply) => reply.doneAt ?? started)) - started) / 1000,
  };
  context.log(
    `rate-tiers: ${target} with ${size} replies: ${run.completed}/${size} complete, ${rateLimited} answered 429, ${run.seconds.toFixed(1)} s`,
  );
  return run;
}

async function startTarget(
  fakes: FakePlatforms,
  databaseUrl: string,
  name: string,
  checkout: EarlierCheckout | undefined,
) {
  return startButlerProcess({
    name,
    database: { kind: 'postgres', url: databaseUrl },
    slackApiUrl: fakes.slackUrl,
    modelUrl: fakes.modelUrl,
    // As many turns at once as the config allows (its maximum is 64), so the replies are concurrent.
    config: { worker: { concurrency: 64 } },
    slackRateTiers: true,
    ...(checkout ? { checkout: checkout.directory } : {}),
  });
}

function rows(runs: readonly Run[]) {
  return runs.map((run) => {
    const first = summarize(run.firstText);
    const complete = summarize(run.complete);
    return [
      run.target === 'now' ? 'Butler' : `Butler before issue 22 (${beforeIssue22})`,
      String(run.replies),
      `${run.completed}/${run.sent}`,
      String(run.rateLimited),
      String(run.streamed),
      milliseconds(first.p50),
      milliseconds(first.p99),
      milliseconds(complete.p50),
      milliseconds(complete.p99),
      run.completed > 0 ? run.seconds.toFixed(1) : 'n/a',
    ];
  });
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply: 'ok', slackUsers: 100 });
  // A quick run measures Butler alone: the "before" drains its 429s for a minute, which a smoke run does not need.
  const earlier = context.quick
    ? { unavailable: 'a quick run compares nothing' }
    : await checkoutEarlierButler(beforeIssue22);
  if ('unavailable' in earlier) context.log(`rate-tiers: no "before" target: ${earlier.unavailable}`);
  const before = 'unavailable' in earlier ? undefined : earlier;
  const runs: Run[] = [];
  try {
    await withBenchDatabase(async (databaseUrl) => {
      for (const size of settings(context).sizes) {
        for (const [target, checkout] of [
          ['now', undefined],
          ...(before ? [['before', before]] : []),
        ] as Array<[string, EarlierCheckout | undefined]>) {
          // A fresh process per run: budgets (Butler's and the fake's) start empty.
          const butler = await startTarget(fakes, databaseUrl, `Butler (${target})`, checkout);
          try {
            runs.push(await measure(context, fakes, butler, target, size));
          } finally {
            await butler.stop();
          }
        }
      }
    });
  } finally {
    await before?.remove();
    await fakes.stop();
  }
  const markdown = [
    table(
      [
        'target',
        'replies at once',
        'complete/sent',
        'answered 429',
        'streams started',
        'first text p50 ms',
        'first text p99 ms',
        'complete p50 ms',
        'complete p99 ms',
        'last reply after s',
      ],
      rows(runs),
    ),
    '',
    bullets([
      `Each run sends that many mentions at once (new threads, one per person, in ${channels} channels of one workspace) to a fresh Butler process (Postgres, 64 worker slots, the config's maximum) and waits up to ${settings(context).drainMilliseconds / 1000} s for the replies.`,
      `The model streams each reply: ${longReply.length} characters in ${modelReply.chunks.length} pieces, one every ${modelReply.chunkDelayMs} ms.`,
      'The fake Slack enforces the tiers per method and workspace (`chat.startStream`/`stopStream` 20 a minute, `chat.update` 50, `chat.appendStream` 100, `chat.postMessage` 3 in 3 s per channel) and answers 429 with Retry-After past them.',
      'first text: mention sent → the first call showing reply text at the fake Slack; complete: → `chat.stopStream` of a streamed reply, or the `chat.postMessage` of one posted whole. Calls answered 429 do not count.',
      `"Butler before issue 22" is commit ${beforeIssue22}, checked out beside this one with \`git worktree\` and run the same way.`,
    ]),
  ].join('\n');
  return { markdown };
}

export const rateTiersBenchmark: Benchmark = {
  name: 'rate-tiers',
  title: 'Many long replies at once in one workspace, within Slack rate tiers',
  run,
};
