import {
  type Aim,
  type Benchmark,
  type BenchmarkContext,
  profilingFlags,
  whilePaused,
} from './lib/benchmark.js';
import { type ButlerProcess, startBenchServer, startButlerProcess } from './lib/butler-process.js';
import { peerLabel, startChatSdkPeer } from './lib/chat-sdk-peer.js';
import { query, withBenchDatabase } from './lib/database.js';
import { type FakePlatforms, startFakePlatforms } from './lib/fake-platforms.js';
import { type ClosedLoopResult, closedLoop, type OutgoingRequest } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import {
  feishuMention,
  feishuSecrets,
  slackMention,
  slackSecrets,
  slackUserId,
} from './lib/platform-requests.js';
import { milliseconds, rate, ratio, summarize, thousands } from './lib/stats.js';

/**
 * 1. Ingest: signed Slack app_mentions and encrypted, signed Feishu im.message.receive_v1 events at
 * concurrency 50 (closed loop) into Butler, into bare SDK apps that only acknowledge, and (Slack) into
 * the Chat SDK + AI SDK peer. Every target runs in its own process; the targets take turns, round
 * after round, and those not being measured are paused (SIGSTOP) so their leftover work takes no CPU.
 */

const concurrency = 50;
const modelReply = 'Deploy 4411 is green in all three regions; nothing needs doing.';
/** Enough distinct senders that nobody reaches Butler's default 20 messages a minute. */
const senders = 20_000;

interface Target {
  kind: 'bare' | 'peer' | 'butler';
  label: string;
  pid: number;
  url: URL;
  next: () => OutgoingRequest;
}

function settings(context: BenchmarkContext) {
  return context.quick
    ? { rounds: 1, warmupMilliseconds: 500, durationMilliseconds: 1_500 }
    : { rounds: 3, warmupMilliseconds: 1_000, durationMilliseconds: 8_000 };
}

async function compare(context: BenchmarkContext, targets: readonly Target[]) {
  const { rounds, warmupMilliseconds, durationMilliseconds } = settings(context);
  const results = new Map<Target, ClosedLoopResult[]>(targets.map((target) => [target, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const others = targets.filter((other) => other !== target).map((other) => other.pid);
      context.log(`ingest: ${target.label}, round ${round + 1}/${rounds}`);
      const result = await whilePaused(others, () =>
        closedLoop({
          url: target.url,
          concurrency,
          warmupMilliseconds,
          durationMilliseconds,
          next: target.next,
        }),
      );
      results.get(target)?.push(result);
    }
  }
  const summary = (target: Target) => {
    const measured = results.get(target) ?? [];
    const latencies = measured.flatMap((round) => round.latencies);
    const seconds = measured.reduce((sum, round) => sum + round.measuredSeconds, 0);
    const succeeded = measured.reduce((sum, round) => sum + round.succeeded, 0);
    const failed = measured.reduce((sum, round) => sum + round.failed, 0);
    const acknowledged = measured.reduce((sum, round) => sum + round.acknowledgedTotal, 0);
    return { ...summarize(latencies), perSecond: succeeded / seconds, failed, acknowledged };
  };
  const of = (kind: Target['kind']) => {
    const target = targets.find((candidate) => candidate.kind === kind);
    return target ? summary(target) : undefined;
  };
  const bare = of('bare');
  const butler = of('butler');
  if (!bare || !butler) throw new Error('ingest: a comparison needs a bare SDK app and Butler');
  return { bare, peer: of('peer'), butler };
}

type Comparison = Awaited<ReturnType<typeof compare>>;
type Figures = Comparison['bare'];

/** Rows for bare SDK, peer (when measured) and Butler, each with its ratios to the bare SDK and the peer. */
function rows(platform: string, bareLabel: string, comparison: Comparison, stored: string) {
  const { bare, peer, butler } = comparison;
  const versus = (figures: Figures, other: Figures | undefined) =>
    other ? [ratio(figures.perSecond / other.perSecond), ratio(figures.p99 / other.p99)] : ['n/a', 'n/a'];
  const row = (label: string, figures: Figures, persisted: string) => [
    `${platform}: ${label}`,
    rate(figures.perSecond),
    milliseconds(figures.p50),
    milliseconds(figures.p90),
    milliseconds(figures.p99),
    ...versus(figures, bare),
    ...versus(figures, peer),
    String(figures.failed),
    persisted,
  ];
  return [
    row(bareLabel, bare, 'nothing (by design)'),
    ...(peer ? [row(peerLabel, peer, 'nothing (in-memory state)')] : []),
    row('Butler', butler, stored),
  ];
}

async function storedCount(databaseUrl: string, platform: string): Promise<number> {
  const [row] = await query<{ count: number }>(
    databaseUrl,
    `select count(*)::int as count from inbound_events where platform = '${platform}'`,
  );
  return row?.count ?? 0;
}

function ingestAim(platform: string, comparison: Comparison, stored: number): Aim {
  const { bare, butler } = comparison;
  const everyEvent = stored === butler.acknowledged;
  return {
    aim: `${platform} ingest: p99 no worse than the bare SDK's, while persisting every event`,
    measured:
      `p99 ${milliseconds(butler.p99)} ms vs ${milliseconds(bare.p99)} ms (${ratio(butler.p99 / bare.p99)}) at concurrency ${concurrency}; ` +
      `${rate(butler.perSecond)} vs ${rate(bare.perSecond)} acks/s; ${everyEvent ? 'every acknowledged event stored' : 'rows MISSING'}`,
    met: butler.p99 <= bare.p99 && everyEvent,
  };
}

function storedCell(stored: number, acknowledged: number): string {
  const verdict = stored === acknowledged ? 'every acknowledged event' : 'MISMATCH';
  return `${thousands(stored)} rows for ${thousands(acknowledged)} acks: ${verdict}`;
}

async function slackRows(
  context: BenchmarkContext,
  butler: ButlerProcess,
  databaseUrl: string,
  fakes: FakePlatforms,
) {
  const [bareBolt, peer] = await Promise.all([
    startBenchServer({
      name: 'bare Bolt (ack only)',
      script: 'bench/servers/bare-bolt.ts',
      arguments: ['ack'],
      env: {
        SLACK_SIGNING_SECRET: slackSecrets.signingSecret,
        SLACK_BOT_TOKEN: slackSecrets.botToken,
        SLACK_API_URL: fakes.slackUrl,
      },
      readyPath: '/healthz',
    }),
    startChatSdkPeer(fakes),
  ]);
  try {
    let sender = 0;
    const next = () => slackMention({ channel: 'C0INGEST', user: slackUserId(sender++ % senders) }).request;
    const target = (
      kind: Target['kind'],
      label: string,
      server: { service: { pid: number }; url: string },
    ): Target => ({ kind, label, pid: server.service.pid, url: new URL(`${server.url}/slack/events`), next });
    const comparison = await compare(context, [
      target('bare', 'bare Bolt', bareBolt),
      target('peer', peerLabel, peer),
      target('butler', 'Butler', butler),
    ]);
    const stored = await storedCount(databaseUrl, 'slack');
    return {
      rows: rows('Slack', 'bare Bolt', comparison, storedCell(stored, comparison.butler.acknowledged)),
      aim: ingestAim('Slack', comparison, stored),
    };
  } finally {
    await Promise.all([bareBolt.stop(), peer.stop()]);
  }
}

async function feishuRows(context: BenchmarkContext, butler: ButlerProcess, databaseUrl: string) {
  const bareLark = await startBenchServer({
    name: 'bare Lark SDK (adaptDefault)',
    script: 'bench/servers/bare-lark.ts',
    env: {
      FEISHU_ENCRYPT_KEY: feishuSecrets.encryptKey,
      FEISHU_VERIFICATION_TOKEN: feishuSecrets.verificationToken,
    },
    readyPath: '/healthz',
  });
  try {
    let sender = 0;
    const next = () =>
      feishuMention({ chatId: 'oc_ingest', senderOpenId: `ou_sender${sender++ % senders}` }).request;
    const comparison = await compare(context, [
      {
        kind: 'bare',
        label: 'bare Lark SDK',
        pid: bareLark.service.pid,
        url: new URL(`${bareLark.url}/feishu/events`),
        next,
      },
      {
        kind: 'butler',
        label: 'Butler',
        pid: butler.service.pid,
        url: new URL(`${butler.url}/feishu/events`),
        next,
      },
    ]);
    const stored = await storedCount(databaseUrl, 'feishu');
    return {
      rows: rows(
        'Feishu',
        'bare Lark SDK adaptDefault',
        comparison,
        storedCell(stored, comparison.butler.acknowledged),
      ),
      aim: ingestAim('Feishu', comparison, stored),
    };
  } finally {
    await bareLark.stop();
  }
}

async function feishuWired(butler: ButlerProcess): Promise<boolean> {
  const response = await fetch(`${butler.url}/readyz`);
  const report = (await response.json()) as { checks?: Record<string, string> };
  return report.checks?.feishu === 'ok';
}

async function run(context: BenchmarkContext) {
  const fakes = await startFakePlatforms({ modelReply, slackUsers: senders });
  try {
    return await withBenchDatabase(async (databaseUrl) => {
      const butler = await startButlerProcess({
        name: 'Butler (ingest)',
        database: { kind: 'postgres', url: databaseUrl },
        slackApiUrl: fakes.slackUrl,
        feishuBaseUrl: fakes.feishuUrl,
        modelUrl: fakes.modelUrl,
        nodeFlags: profilingFlags(context, 'ingest'),
      });
      try {
        const slack = await slackRows(context, butler, databaseUrl, fakes);
        const tableRows = [...slack.rows];
        const aims = [slack.aim];
        const feishu = await feishuWired(butler);
        if (feishu) {
          const measured = await feishuRows(context, butler, databaseUrl);
          tableRows.push(...measured.rows);
          aims.push(measured.aim);
        }
        const { rounds, durationMilliseconds } = settings(context);
        const markdown = [
          table(
            [
              'target',
              'acks/s',
              'p50 ms',
              'p90 ms',
              'p99 ms',
              'acks/s vs bare',
              'p99 vs bare',
              'acks/s vs peer',
              'p99 vs peer',
              'errors',
              'persisted',
            ],
            tableRows,
          ),
          '',
          bullets([
            `Offered load: closed loop, ${concurrency} requests in flight over a keep-alive agent, ` +
              `${rounds} round(s) of ${durationMilliseconds / 1000} s per target after a warm-up; targets alternate, and those not measured are paused (SIGSTOP).`,
            'Every event is new: a unique event id and message, each opening its own conversation (Slack `app_mention`; Feishu group @mention).',
            'Butler runs as users run it (`node --import tsx src/main.ts`, Postgres, default config), with its model pointed at a fake that answers at once: ' +
              'its worker answers the backlog (fake Slack / Feishu APIs, in another process) while it ingests, as in production.',
            'Butler acknowledges only after the event row is committed; the bare apps store nothing. "persisted" counts the rows afterwards.',
            `The ${peerLabel} (Slack only: the Chat SDK has no Feishu adapter) runs as in the end-to-end benchmark: it acknowledges, then streams each reply from the fake model in the background, as Butler's worker does.`,
            ...(feishu
              ? []
              : [
                  'Feishu: not measured: the Feishu connector is not wired into `src/platform-connectors.ts` yet.',
                ]),
          ]),
        ].join('\n');
        return { markdown, aims };
      } finally {
        await butler.stop();
      }
    });
  } finally {
    await fakes.stop();
  }
}

export const ingestBenchmark: Benchmark = {
  name: 'ingest',
  title: '1. Ingest: acknowledgements per second and latency',
  run,
};
