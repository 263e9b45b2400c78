import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { InboundMessage } from '../src/core/contracts/events.js';
import { startTestButler } from '../tests/helpers/butler-app.js';
import { type RecordedRequest, startFakeModelServer } from '../tests/helpers/fake-model-server.js';
import { RecordingAdapter } from '../tests/helpers/recording-adapter.js';
import type { Aim, Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { fakeSummary, type ScriptedTurn, scriptConversation } from './lib/conversation-script.js';
import { bullets, table } from './lib/markdown.js';
import { percent, thousands } from './lib/stats.js';
import { renderLineChart } from './lib/svg-chart.js';

/**
 * 3. Token economy: one scripted group conversation of N turns through the real Butler (worker, turn
 * runner, session brain, database), once with compaction at the default threshold and once without.
 * The fake model reports prompt tokens counted with o200k_base over exactly what it was sent (messages
 * plus tool definitions, with the chat format's per-message overhead), and answers compaction requests
 * with a summary written as the compaction instructions ask.
 */

const compactionMarker = 'You maintain the running summary';
export const chartFileName = 'prompt-tokens.svg';

const cache = new Map<string, number>();
function tokens(text: string): number {
  let count = cache.get(text);
  if (count === undefined) {
    count = text.length === 0 ? 0 : countTokens(text);
    if (text.length > 200) cache.set(text, count);
  }
  return count;
}

/** What an OpenAI model bills as prompt tokens: per message 3 + content (+1 with a name), +3 priming, tools. */
function promptTokens(request: RecordedRequest): number {
  let total = 3;
  for (const message of request.messages) {
    total += 3 + (typeof message.content === 'string' ? tokens(message.content) : 0);
    if (Array.isArray(message.tool_calls)) total += tokens(JSON.stringify(message.tool_calls));
  }
  if (request.tools?.length) total += tokens(JSON.stringify(request.tools));
  return total;
}

interface TurnTokens {
  prompt: number;
  compactions: Array<{ prompt: number; completion: number }>;
}

interface ModeResult {
  turns: TurnTokens[];
  thresholdTokens: number;
  seconds: number;
}

async function converse(
  script: readonly ScriptedTurn[],
  compaction: boolean,
  thresholdTokens?: number,
): Promise<ModeResult> {
  const turns: TurnTokens[] = [];
  let pendingCompactions: TurnTokens['compactions'] = [];
  const model = await startFakeModelServer();
  model.setFallback((request) => {
    const system = String(request.messages[0]?.content ?? '');
    const prompt = promptTokens(request);
    if (system.startsWith(compactionMarker)) {
      const limit = Number(/at most (\d+) words/.exec(system)?.[1] ?? 300);
      const summary = fakeSummary(String(request.messages[1]?.content ?? ''), limit);
      const completion = tokens(summary);
      pendingCompactions.push({ prompt, completion });
      return { text: summary, usage: { promptTokens: prompt, completionTokens: completion } };
    }
    const turn = script[turns.length];
    turns.push({ prompt, compactions: pendingCompactions });
    pendingCompactions = [];
    const reply = turn?.reply ?? 'Noted.';
    return { text: reply, usage: { promptTokens: prompt, completionTokens: tokens(reply) } };
  });
  const adapter = new RecordingAdapter('console');
  const app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'bench-model',
      BUTLER_CONTEXT_COMPACTION_ENABLED: String(compaction),
      ...(thresholdTokens ? { BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS: String(thresholdTokens) } : {}),
    },
    // The script sends faster than people type: lift the per-person rate limit.
    config: { rateLimit: { messagesPerMinute: 100_000 } },
    adapters: [adapter],
  });
  const started = performance.now();
  try {
    for (const [index, turn] of script.entries()) {
      const messageId = `bench-${compaction ? 'on' : 'off'}-${index}`;
      const message: InboundMessage = {
        kind: 'message',
        address: {
          platform: 'console',
          workspace: 'local',
          channel: 'platform-team',
          thread: 'incident-room',
        },
        messageId,
        eventId: messageId,
        dedupKey: messageId,
        user: { id: turn.author.toLowerCase(), name: turn.author },
        text: turn.text,
        isMention: true,
        isDirect: false,
        sentAt: new Date().toISOString(),
      };
      await app.butler.service.accept(message);
      await app.settle(60_000);
    }
    return {
      turns,
      thresholdTokens: app.butler.config.compaction.thresholdTokens,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await app.close();
    await model.close();
  }
}

function totals(result: ModeResult) {
  const compactions = result.turns.flatMap((turn) => turn.compactions);
  const chat = result.turns.reduce((sum, turn) => sum + turn.prompt, 0);
  const compactionPrompt = compactions.reduce((sum, call) => sum + call.prompt, 0);
  const compactionCompletion = compactions.reduce((sum, call) => sum + call.completion, 0);
  return {
    chat,
    compactions: compactions.length,
    compactionPrompt,
    compactionCompletion,
    total: chat + compactionPrompt + compactionCompletion,
    largest: Math.max(...result.turns.map((turn) => turn.prompt)),
    lastTurn: result.turns.at(-1)?.prompt ?? 0,
    meanPrompt: chat / Math.max(1, result.turns.length),
  };
}

/** Other thresholds than the default, to show the trade-off (full runs only). */
const otherThresholds = [3_000, 6_000, 8_000];

async function sensitivity(context: BenchmarkContext, script: readonly ScriptedTurn[], fullHistory: number) {
  const rows: string[][] = [];
  for (const threshold of otherThresholds) {
    context.log(`token economy: ${script.length} turns at threshold ${threshold}`);
    const figures = totals(await converse(script, true, threshold));
    rows.push([
      thousands(threshold),
      thousands(figures.total),
      percent(figures.total / fullHistory),
      String(figures.compactions),
      thousands(figures.meanPrompt),
      thousands(threshold * 0.35),
    ]);
  }
  return rows;
}

async function run(context: BenchmarkContext) {
  const turnCount = context.quick ? 40 : 300;
  const script = scriptConversation(turnCount);
  context.log(`token economy: ${turnCount} turns with compaction`);
  const on = await converse(script, true);
  context.log(`token economy: ${turnCount} turns without compaction (full history)`);
  const off = await converse(script, false);
  const withCompaction = totals(on);
  const fullHistory = totals(off);
  const sensitivityRows = context.quick ? [] : await sensitivity(context, script, fullHistory.total);
  sensitivityRows.push([
    `${thousands(on.thresholdTokens)} (default)`,
    thousands(withCompaction.total),
    percent(withCompaction.total / fullHistory.total),
    String(withCompaction.compactions),
    thousands(withCompaction.meanPrompt),
    thousands(on.thresholdTokens * 0.35),
  ]);
  sensitivityRows.sort(
    (left, right) =>
      Number.parseInt(left[0]?.replace(',', '') ?? '0', 10) -
      Number.parseInt(right[0]?.replace(',', '') ?? '0', 10),
  );
  const row = (label: string, figures: ReturnType<typeof totals>, seconds: number) => [
    label,
    thousands(figures.chat),
    String(figures.compactions),
    `${thousands(figures.compactionPrompt)} + ${thousands(figures.compactionCompletion)}`,
    thousands(figures.total),
    percent(figures.total / fullHistory.total),
    thousands(figures.largest),
    thousands(figures.lastTurn),
    `${seconds.toFixed(0)} s`,
  ];
  const compactionTurns = on.turns.flatMap((turn, index) => (turn.compactions.length > 0 ? [index + 1] : []));
  const chartName = context.outputName(chartFileName);
  const chart = renderLineChart({
    title: `Prompt tokens per turn over a ${turnCount}-turn conversation`,
    xLabel: 'turn',
    yLabel: 'prompt tokens (as the model counts them)',
    series: [
      {
        name: 'without compaction (full history)',
        color: '#cf222e',
        values: off.turns.map((turn) => turn.prompt),
      },
      {
        name: `with compaction (threshold ${thousands(on.thresholdTokens)})`,
        color: '#0969da',
        values: on.turns.map((turn) => turn.prompt),
      },
    ],
    markers: { name: 'a compaction ran before this turn', color: '#1a7f37', at: compactionTurns },
  });
  const markdown = [
    table(
      [
        'mode',
        'prompt tokens, all turns',
        'compactions',
        'compaction tokens (prompt + output)',
        'total',
        'vs full history',
        'largest prompt',
        'last turn prompt',
        'run time',
      ],
      [
        row(`compaction on (threshold ${thousands(on.thresholdTokens)})`, withCompaction, on.seconds),
        row('compaction off (full history)', fullHistory, off.seconds),
      ],
    ),
    '',
    `![Prompt tokens per turn, compaction on vs off](${chartName})`,
    '',
    'The threshold (`BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS`) sets the trade-off: a lower one sends fewer tokens but keeps less of the conversation verbatim (the rest lives only in the summary) and compacts more often.',
    '',
    table(
      [
        'threshold',
        'total tokens (compaction included)',
        'vs full history',
        'compactions',
        'mean prompt per turn',
        'recent messages kept verbatim (tokens)',
      ],
      sensitivityRows,
    ),
    '',
    bullets([
      `${turnCount} turns of one group conversation (four people, scripted and seeded: questions about incidents, deploys, tickets, numbers); ` +
        'each reply 2-7 sentences (about 40-200 tokens). Same script, same replies in both modes.',
      'Through the real Butler in-process: durable inbox, worker, turn runner, session brain with its default settings (keep 35% of the threshold verbatim, summary capped at 20% of it), PGlite.',
      'Prompt tokens are counted by the fake model over what it received (o200k_base; 3 tokens per message, 3 for priming, tool definitions included): the figure a provider bills. ' +
        '"total" adds the compaction calls, prompt and output, to the chat prompts.',
      'The compaction model is a stand-in: it merges the previous summary with one terse bullet per folded message and keeps the newest bullets within the word limit Butler asks for. ' +
        'A real model writes different summaries; the summary size is bounded by the instruction either way.',
    ]),
  ].join('\n');
  const share = withCompaction.total / fullHistory.total;
  const aims: Aim[] = [
    {
      aim: `Tokens: cumulative prompt tokens over ${turnCount} turns at most 15% of full-history replay, compaction included`,
      measured: `${percent(share)} at the default threshold (${thousands(on.thresholdTokens)} tokens); see the threshold table for the trade-off`,
      met: share <= 0.15,
    },
  ];
  return { markdown, aims, files: { [chartFileName]: chart } };
}

export const tokenEconomyBenchmark: Benchmark = {
  name: 'tokens',
  title: '3. Token economy: prompt tokens over a long conversation',
  run,
};
