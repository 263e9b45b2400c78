import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedPgliteDirectory } from './database.js';
import { entryArguments, tsxEnvironment } from './entry-points.js';

/** Runs `npm run chat`'s entry point as a user would, typing lines once the expected output shows. */
export function startChat(env: Record<string, string>) {
  // A migrated copy of the run's template, as every other test's database: migrating anew costs seconds.
  if (env.BUTLER_DATA_DIR && !env.DATABASE_URL) seedPgliteDirectory(env.BUTLER_DATA_DIR);
  // Outside the repository, as every user's chat runs: a developer's own config and .butler there are not read.
  const cwd = mkdtempSync(join(tmpdir(), 'butler-chat-'));
  const child = spawn(process.execPath, entryArguments('src/chat.ts'), {
    env: { ...process.env, LOG_LEVEL: 'warn', ...tsxEnvironment, ...env },
    cwd,
    stdio: 'pipe',
  });
  child.on('exit', () => rmSync(cwd, { recursive: true, force: true }));
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** The exit code, or a failure naming what was shown, should the chat not exit within 20 s. */
  const exitCode = () =>
    Promise.race([
      exited,
      new Promise<never>((_resolve, reject) =>
        setTimeout(() => reject(new Error(`the chat did not exit; it showed:\n${output}`)), 20_000).unref(),
      ),
    ]);
  /** Waits until `text` has been written `times` times in all. */
  const waitFor = async (text: string, { times = 1, timeoutMs = 20_000 } = {}) => {
    const deadline = Date.now() + timeoutMs;
    while (output.split(text).length - 1 < times) {
      if (Date.now() > deadline) throw new Error(`never saw "${text}" ${times} times in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return {
    child,
    /** Where the chat runs: `/attach` paths and saved files are relative to it. */
    cwd,
    exited: exitCode,
    waitFor,
    output: () => output,
    type: (line: string) => child.stdin.write(`${line}\n`),
  };
}
