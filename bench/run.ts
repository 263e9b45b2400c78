import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { approvalBenchmark } from './approval.js';
import { busyWorkspaceBenchmark } from './busy-workspace.js';
import { closedLoopBenchmark } from './closed-loop.js';
import { decisionLatencyBenchmark } from './decision-latency.js';
import { endToEndBenchmark } from './end-to-end.js';
import { filesBenchmark } from './files.js';
import { ingestBenchmark } from './ingest.js';
import type { Aim, Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { describeMachine } from './lib/machine.js';
import { bullets, table } from './lib/markdown.js';
import { mcpConnectBenchmark } from './mcp-connect.js';
import { memoryBenchmark } from './memory.js';
import { rateTiersBenchmark } from './rate-tiers.js';
import { schedulesBenchmark } from './schedules.js';
import { streamingBenchmark } from './streaming.js';
import { tokenEconomyBenchmark } from './token-economy.js';
import { turnCostsBenchmark } from './turn-costs.js';

/**
 * `npm run bench` runs every benchmark and writes bench/results/latest.md (plus the SVG chart beside it).
 * `npm run bench -- --quick` is a short smoke run (results in quick.md); naming benchmarks runs only
 * those (results in partial.md); `--cpu-prof` makes the Butler processes write CPU profiles.
 */

const benchmarks: Benchmark[] = [
  ingestBenchmark,
  endToEndBenchmark,
  closedLoopBenchmark,
  tokenEconomyBenchmark,
  streamingBenchmark,
  memoryBenchmark,
  approvalBenchmark,
  turnCostsBenchmark,
  decisionLatencyBenchmark,
  rateTiersBenchmark,
  busyWorkspaceBenchmark,
  filesBenchmark,
  schedulesBenchmark,
  mcpConnectBenchmark,
];

const resultsDirectory = fileURLToPath(new URL('./results/', import.meta.url));

function parseArguments(argv: readonly string[]) {
  const names = argv.filter((argument) => !argument.startsWith('--'));
  const unknown = names.filter((name) => !benchmarks.some((benchmark) => benchmark.name === name));
  if (unknown.length > 0) {
    console.error(
      `unknown benchmark(s): ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ')}`,
    );
    process.exit(2);
  }
  return {
    quick: argv.includes('--quick'),
    profile: argv.includes('--cpu-prof'),
    selected:
      names.length > 0 ? benchmarks.filter((benchmark) => names.includes(benchmark.name)) : benchmarks,
  };
}

async function main(): Promise<void> {
  const options = parseArguments(process.argv.slice(2));
  const started = performance.now();
  const cpuProfileDirectory = options.profile ? mkdtempSync(join(tmpdir(), 'butler-profiles-')) : undefined;
  const partial = options.selected.length < benchmarks.length;
  const prefix = options.quick ? 'quick-' : partial ? 'partial-' : '';
  const context: BenchmarkContext = {
    quick: options.quick,
    cpuProfileDirectory,
    log: (message) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${message}`),
    outputName: (fileName) => prefix + fileName,
  };
  const machine = await describeMachine();
  const sections: string[] = [];
  const files: Record<string, string> = {};
  const aims: Aim[] = [];
  let failures = 0;
  for (const benchmark of options.selected) {
    context.log(`${benchmark.name}: starting`);
    const benchmarkStarted = performance.now();
    let body: string;
    try {
      const output = await benchmark.run(context);
      body = output.markdown;
      Object.assign(files, output.files ?? {});
      aims.push(...(output.aims ?? []));
    } catch (error) {
      failures += 1;
      body = `**Not measured: the benchmark failed.**\n\n\`\`\`\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n\`\`\``;
      console.error(error);
    }
    const seconds = (performance.now() - benchmarkStarted) / 1000;
    context.log(`${benchmark.name}: done in ${seconds.toFixed(1)} s`);
    sections.push(`## ${benchmark.title}\n\n${body}\n\n_Took ${seconds.toFixed(0)} s._`);
  }

  const mode = options.quick ? 'quick (smoke run; small numbers, not for comparison)' : 'full';
  const header = [
    '# Butler benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts). Ratios are measured side by side in one run on the same machine; ' +
      'absolute figures depend on the machine and on what else ran on it.',
    '',
    table(
      ['machine', 'value'],
      [
        ['date', machine.date],
        ['mode', mode],
        ['CPU', `${machine.cores} cores, ${machine.cpuModel}`],
        ['memory', machine.memory],
        ['Node', machine.node],
        ['Postgres', machine.postgres],
        ['load average at start (1/5/15 min)', machine.loadAverage],
      ],
    ),
    '',
    bullets([
      'Reproduce: `npm run bench` (all, a few minutes each) or `npm run bench -- --quick` (smoke run).',
    ]),
    '',
    '## Where Butler stands against the aims',
    '',
    table(
      ['aim (issues 5 and 14)', 'measured in this run', 'met'],
      aims.map((entry) => [entry.aim, entry.measured, entry.met ? 'yes' : '**no**']),
    ),
  ].join('\n');
  const fileName = options.quick ? 'quick.md' : partial ? 'partial.md' : 'latest.md';
  mkdirSync(resultsDirectory, { recursive: true });
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(resultsDirectory, prefix + name), content);
  writeFileSync(join(resultsDirectory, fileName), `${[header, ...sections].join('\n\n')}\n`);
  context.log(`wrote bench/results/${fileName}`);
  if (cpuProfileDirectory) context.log(`CPU profiles in ${cpuProfileDirectory}`);
  process.exitCode = failures > 0 ? 1 : 0;
}

await main();
