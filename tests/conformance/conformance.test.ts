import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { repositoryRoot, tsxLoader } from '../helpers/entry-points.js';

/**
 * The MCP project's conformance suite (`@modelcontextprotocol/conformance`) against Butler's MCP client: every
 * client scenario of the spec versions Butler claims (2025-06-18 and 2025-11-25, and the 2025-03-26 back-compat
 * ones), each a test server (and authorization server) the suite starts, with Butler as the client
 * (`butler-client.ts` drives it as a person would). Failures listed in `baseline.yml` are expected; any other
 * failure, or a listed scenario that passes, fails the run.
 */

const suite = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '..',
  'dist/index.js',
);
const here = join(repositoryRoot, 'tests/conformance');

/** Runs one selection of client scenarios (in parallel, a Butler each); its exit code and what it printed. */
async function runSuite(selection: string[]) {
  const results = mkdtempSync(join(tmpdir(), 'butler-conformance-results-'));
  const client = `${process.execPath} --import ${tsxLoader} ${join(here, 'butler-client.ts')}`;
  const child = spawn(
    process.execPath,
    [
      '--import',
      join(here, 'node20/register.mjs'),
      suite,
      'client',
      '--command',
      client,
      ...selection,
      '--expected-failures',
      join(here, 'baseline.yml'),
      '--timeout',
      '120000',
      '-o',
      results,
    ],
    {
      env: {
        ...process.env,
        LOG_LEVEL: 'silent',
        BUTLER_CONFORMANCE_PGLITE_TEMPLATE: inject('pgliteTemplate') ?? '',
      },
      stdio: 'pipe',
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  rmSync(results, { recursive: true, force: true });
  return { code, output: output.slice(-20_000) };
}

it('passes the conformance suite’s client scenarios, but for its baseline', async () => {
  const current = await runSuite(['--suite', 'all', '--spec-version', '2025-11-25']);
  expect(current.code, current.output).toBe(0);
  const backCompatible = await runSuite(['--suite', 'backcompat']);
  expect(backCompatible.code, backCompatible.output).toBe(0);
}, 600_000);
