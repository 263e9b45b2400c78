import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { repositoryRoot } from '../helpers/entry-points.js';
import { startScenarioHost } from './scenario-host.js';

/**
 * The MCP project's conformance suite (`@modelcontextprotocol/conformance`) against Butler's MCP client: every
 * client scenario of the spec versions Butler claims (2025-06-18 and 2025-11-25, and the 2025-03-26 back-compat
 * ones), each a test server (and authorization server) the suite starts, with Butler as the client
 * (`scenario-host.ts` drives it as a person would). Failures listed in `baseline.yml` are expected; any other
 * failure, or a listed scenario that passes, fails the run.
 *
 * Scenarios run a few at a time, and `sse-retry` alone at the end: it times the client's reconnection against the
 * server's `retry` (200 ms late is a failure), which a busy process can miss through no fault of the client.
 */

const suite = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '..',
  'dist/index.js',
);
const here = join(repositoryRoot, 'tests/conformance');
const claimedVersions = ['2025-06-18', '2025-11-25', '2025-03-26'];
const timed = ['sse-retry'];
const atOnce = 3;

let host: Awaited<ReturnType<typeof startScenarioHost>>;
beforeAll(async () => {
  host = await startScenarioHost(inject('pgliteTemplate'));
});
afterAll(async () => {
  await host?.close();
});

/** Runs the suite's CLI; its exit code and what it printed. */
async function conformance(args: string[]) {
  const child = spawn(process.execPath, ['--import', join(here, 'node20/register.mjs'), suite, ...args], {
    env: { ...process.env, BUTLER_CONFORMANCE_HOST: host.url },
    stdio: 'pipe',
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, output };
}

/** The client scenarios of the spec versions Butler claims, as the suite lists them. */
async function claimedScenarios(): Promise<string[]> {
  const { output } = await conformance(['list']);
  const clients = output.slice(output.indexOf('Client scenarios'));
  return [...clients.matchAll(/^\s+- (\S+) \[([^\]]+)\]/gm)]
    .filter((match) => (match[2] ?? '').split(',').some((version) => claimedVersions.includes(version)))
    .map((match) => match[1] ?? '');
}

it('passes the conformance suite’s client scenarios, but for its baseline', async () => {
  const scenarios = await claimedScenarios();
  expect(scenarios).toContain('auth/scope-step-up');
  const results = mkdtempSync(join(tmpdir(), 'butler-conformance-results-'));
  const failures: string[] = [];
  const run = async (scenario: string) => {
    const { code, output } = await conformance([
      'client',
      '--command',
      `${process.execPath} ${join(here, 'thin-client.mjs')}`,
      '--scenario',
      scenario,
      '--expected-failures',
      join(here, 'baseline.yml'),
      '--timeout',
      '120000',
      '-o',
      results,
    ]);
    if (code !== 0) failures.push(`${scenario}:\n${output.slice(-6_000)}`);
  };
  try {
    const queue = scenarios.filter((scenario) => !timed.includes(scenario));
    await Promise.all(
      Array.from({ length: atOnce }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) await run(next);
      }),
    );
    for (const scenario of scenarios.filter((each) => timed.includes(each))) await run(scenario);
  } finally {
    rmSync(results, { recursive: true, force: true });
  }
  expect(failures).toEqual([]);
}, 600_000);
