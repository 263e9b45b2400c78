import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpServer, type McpServerSettings } from '../../../src/core/tools/mcp/index.js';
import { outputText, type Tool } from '../../../src/core/tools/tool.js';
import {
  readCallLog,
  recordingLogger,
  stdioTestTransport,
  testSettings,
  toolContext,
} from '../../helpers/mcp-test-server.js';
import { waitFor } from '../../helpers/wait-for.js';

/** What only a child process can show: its environment, its stderr, its crashes and its start-up. */

const fast = { reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, pingIntervalMs: 0 };
// Unique, so the test can look for leftovers of exactly this child.
const muteScript = `setInterval(() => {}, 1000); // butler-mcp-mute-${process.pid}`;
const stdioEntry = fileURLToPath(new URL('../../helpers/mcp-test-server-stdio.ts', import.meta.url));

let directory: string;
let callLog: string;
const servers: McpServer[] = [];

function supervise(settings: McpServerSettings, logger = recordingLogger().logger): McpServer {
  const server = new McpServer(settings, logger, fast);
  servers.push(server);
  return server;
}

function toolOf(server: McpServer, name: string): Tool {
  const found = server.tools().find((candidate) => candidate.name === `${server.name}__${name}`);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** Children started by the mute-server case, found by their unique command line. */
function runningMuteChildren(): string[] {
  const output = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return output.split('\n').filter((line) => line.includes(muteScript));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'butler-mcp-stdio-'));
  callLog = join(directory, 'calls.jsonl');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  rmSync(directory, { recursive: true, force: true });
});

describe('McpServer over stdio', () => {
  it('gives the child only its configured environment, never Butler secrets', async () => {
    process.env.BUTLER_TEST_PARENT_SECRET = 'parent-secret-value';
    try {
      const server = supervise(testSettings('env', stdioTestTransport(callLog, { GIVEN: 'given-value' })));
      await server.start();
      const run = (name: string, input: unknown) =>
        toolOf(server, name).execute(input, toolContext()).then(outputText);
      await expect(run('read_env', { name: 'BUTLER_TEST_PARENT_SECRET' })).resolves.toBe('(unset)');
      await expect(run('read_env', { name: 'GIVEN' })).resolves.toBe('given-value');
      await expect(run('read_env', { name: 'PATH' })).resolves.toBe(process.env.PATH);
      const keys = JSON.parse(await run('env_keys', {})) as string[];
      // The SDK's transport also passes sudo's safe list (LOGNAME, SHELL, TERM, USER): no secrets there.
      const allowed = ['GIVEN', 'MCP_TEST_CALL_LOG', 'PATH', 'HOME', 'LOGNAME', 'SHELL', 'TERM', 'USER'];
      expect(keys.filter((key) => !allowed.includes(key))).toEqual([]);
    } finally {
      delete process.env.BUTLER_TEST_PARENT_SECRET;
    }
  });

  it("starts the child in an empty directory of its own, not in Butler's, unless `cwd` is configured", async () => {
    // Butler's working directory holds .env and butler.config.yaml: a child started there reads them by name.
    const where = async (server: McpServer) => {
      // On a loaded machine the first attempt may miss its connect timeout; the retry comes quickly.
      await server.start();
      await waitFor(() => server.status().state === 'connected', 20_000);
      return JSON.parse(outputText(await toolOf(server, 'working_directory').execute({}, toolContext()))) as {
        path: string;
        entries: string[];
      };
    };
    const neutral = supervise(testSettings('neutral', stdioTestTransport(callLog, {}, null)));
    const scratch = await where(neutral);
    expect(scratch.path).not.toBe(process.cwd());
    expect(scratch.entries).toEqual([]);
    expect(statSync(scratch.path).mode & 0o777).toBe(0o700);
    await neutral.stop();
    expect(existsSync(scratch.path)).toBe(false);

    const configured = supervise(testSettings('configured', stdioTestTransport(callLog, {}, directory)));
    expect((await where(configured)).path).toBe(realpathSync(directory));
  });

  it('logs the child stderr at debug level with secrets redacted', async () => {
    const { logger, entries } = recordingLogger();
    const secret = 'hunter2-very-secret';
    const server = supervise(
      testSettings('noisy', stdioTestTransport(callLog, { API_SECRET: secret })),
      logger,
    );
    await server.start();
    await toolOf(server, 'log_stderr').execute(
      { line: `using ${secret} and Authorization: Bearer abc.def and xoxb-1234-abcdefgh` },
      toolContext(),
    );
    const line = await waitFor(() =>
      entries.find(
        (entry) => typeof entry.fields.stderr === 'string' && entry.fields.stderr.startsWith('using'),
      ),
    );
    expect(line.level).toBe('debug');
    expect(line.fields).toMatchObject({
      mcpServer: 'noisy',
      stderr: 'using [redacted] and Authorization: Bearer [redacted] and [redacted]',
    });
    expect(JSON.stringify(entries)).not.toContain(secret);
  });

  it('restarts a crashed child and offers its tools again', async () => {
    const server = supervise(testSettings('crashy', stdioTestTransport(callLog)));
    const changes: number[] = [];
    server.onToolsChanged((tools) => changes.push(tools.length));
    await server.start();
    const firstPid = Number(await toolOf(server, 'pid').execute({}, toolContext()));
    const crash = toolOf(server, 'crash').execute({}, toolContext());
    await expect(crash).rejects.toMatchObject({
      code: 'mcp_call_failed',
      message: /may or may not have run/,
    });
    // A child started through tsx, on a busy machine: seconds, not milliseconds.
    await waitFor(() => changes.includes(0), 20_000);
    await waitFor(() => server.status().state === 'connected' && server.tools().length > 0, 20_000);
    const secondPid = Number(await toolOf(server, 'pid').execute({}, toolContext()));
    expect(secondPid).not.toBe(firstPid);
    expect(readCallLog(callLog).filter((call) => call.tool === 'crash')).toHaveLength(1);
    expect(changes.at(-1)).toBeGreaterThan(0);
  });

  it('starts down without blocking when the server cannot start, then comes up when it can', async () => {
    const entry = join(directory, 'late-server.mts');
    const settings = testSettings('late', {
      ...stdioTestTransport(callLog),
      args: ['--import', 'tsx', entry],
    } as McpServerSettings['transport']);
    const server = supervise(settings);
    const started = Date.now();
    await server.start();
    expect(Date.now() - started).toBeLessThan(settings.connectTimeoutMs);
    expect(server.status()).toMatchObject({ state: 'down', tools: 0 });
    expect(server.status().error).toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND|Connection closed/);
    expect(server.tools()).toEqual([]);

    writeFileSync(entry, `import ${JSON.stringify(pathToFileURL(stdioEntry).href)};\n`);
    await waitFor(() => server.status().state === 'connected', 20_000);
    expect(server.status().error).toBeUndefined();
    await expect(toolOf(server, 'lookup').execute({ query: 'up' }, toolContext())).resolves.toBe('found up');
  });

  it('gives up on a child that never answers after the connect timeout, and stop() kills the child', async () => {
    const settings = testSettings(
      'mute',
      { kind: 'stdio', command: process.execPath, args: ['-e', muteScript], env: {} },
      { connectTimeoutMs: 300 },
    );
    const server = supervise(settings);
    const started = Date.now();
    await server.start();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.status()).toMatchObject({ state: 'down', error: 'no answer within 300 ms' });
    await server.stop();
    expect(runningMuteChildren()).toEqual([]);
    expect(server.status().state).toBe('stopped');

    const live = supervise(testSettings('live', stdioTestTransport(callLog)));
    await live.start();
    const pid = Number(await toolOf(live, 'pid').execute({}, toolContext()));
    expect(isAlive(pid)).toBe(true);
    await live.stop();
    expect(isAlive(pid)).toBe(false);
    expect(live.tools()).toEqual([]);
    await expect(live.whenSettled()).resolves.toBeUndefined();
  });
});
