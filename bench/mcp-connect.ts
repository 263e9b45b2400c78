import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { PriorDiscovery } from '@modelcontextprotocol/client';
import type { McpServerSettings } from '../src/core/tools/mcp/index.js';
import { openMcpConnection } from '../src/core/tools/mcp/mcp-connection.js';
import type { Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { bullets, table } from './lib/markdown.js';
import { median, milliseconds } from './lib/stats.js';

/**
 * What version negotiation costs a stdio MCP server's connect: the first connect probes `server/discover` on a
 * short-lived second child; a reconnect (a crashed child restarted) reuses the verdict the first one found and
 * starts one child only. Both are measured in the same run, against the official servers from npm.
 */

const modules = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/', import.meta.url));

const servers: Array<{ name: string; entry: string; args: string[] }> = [
  { name: 'server-filesystem', entry: `${modules}server-filesystem/dist/index.js`, args: ['/tmp'] },
  { name: 'server-everything', entry: `${modules}server-everything/dist/index.js`, args: ['stdio'] },
];

function settingsFor(server: (typeof servers)[number]): McpServerSettings {
  return {
    name: server.name.replace('-', '_'),
    transport: { kind: 'stdio', command: process.execPath, args: [server.entry, ...server.args], env: {} },
    timeoutMs: 10_000,
    connectTimeoutMs: 15_000,
    risk: {},
    trustAnnotations: true,
    maxResultChars: 20_000,
    maxResponseBytes: 1_048_576,
  };
}

/** One connect (and its close): how long it took and what it found. */
async function connect(settings: McpServerSettings, prior?: PriorDiscovery) {
  const closing: Array<Promise<void>> = [];
  const started = performance.now();
  const connection = await openMcpConnection({
    settings,
    clientInfo: { name: 'butler-bench', version: '0' },
    signal: AbortSignal.timeout(settings.connectTimeoutMs),
    events: {
      onClose: () => {},
      onError: () => {},
      onToolsChanged: () => {},
      onStderrLine: () => {},
      onClosing: (closed) => closing.push(closed),
    },
    workingDirectory: () => '/tmp',
    ...(prior ? { prior } : {}),
  });
  const elapsed = performance.now() - started;
  await connection.close();
  await Promise.all(closing);
  return { elapsed, era: connection.era, revision: connection.protocolVersion };
}

async function run(context: BenchmarkContext) {
  const rounds = context.quick ? 3 : 9;
  const rows: string[][] = [];
  for (const server of servers) {
    if (!existsSync(server.entry)) continue;
    const settings = settingsFor(server);
    const probed: number[] = [];
    const remembered: number[] = [];
    let revision: string | undefined;
    for (let round = 0; round < rounds; round++) {
      const first = await connect(settings);
      probed.push(first.elapsed);
      revision = first.revision;
      remembered.push((await connect(settings, first.era)).elapsed);
    }
    context.log(
      `${server.name}: probed ${milliseconds(median(probed))} ms, remembered ${milliseconds(median(remembered))} ms`,
    );
    rows.push([
      server.name,
      revision ?? '?',
      milliseconds(median(probed)),
      milliseconds(median(remembered)),
      `${(median(probed) / median(remembered)).toFixed(2)}×`,
    ]);
  }
  return {
    markdown: [
      table(
        ['server (stdio)', 'revision', 'first connect, ms (probe)', 'reconnect, ms (verdict kept)', 'ratio'],
        rows,
      ),
      bullets([
        `Medians of ${rounds} connects each, alternating, in one run; each connect includes spawning node.`,
        'The probe runs on a second, disposable child, so a first connect costs about one more process start.',
      ]),
    ].join('\n\n'),
  };
}

export const mcpConnectBenchmark: Benchmark = {
  name: 'mcp-connect',
  title: 'MCP connect: the version probe, and reconnects that skip it',
  run,
};
