import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { seedPgliteDirectory } from './database.js';
import { entryArguments, tsxEnvironment } from './entry-points.js';
import type { AdapterEvent } from './recording-adapter.js';

/** Driving `child-butler.ts`: a Butler in a child process that tests kill, and the lines it prints. */

export type ChildLine = AdapterEvent | { ready: true } | { accepted: string } | { stopped: true };

export type ButlerChild = ReturnType<typeof startButlerChild>;

export function startButlerChild(env: Record<string, string>) {
  // A migrated copy of the run's template: a child that migrates a fresh embedded database takes seconds more.
  if (env.BUTLER_DATA_DIR && !env.DATABASE_URL) seedPgliteDirectory(env.BUTLER_DATA_DIR);
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    entryArguments('tests/helpers/child-butler.ts'),
    { env: { ...process.env, ...tsxEnvironment, ...env }, cwd: tmpdir(), stdio: 'pipe' },
  );
  const lines: ChildLine[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    lines.push(JSON.parse(text) as ChildLine);
    for (const wake of waiters) wake();
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const waitFor = <T extends ChildLine>(
    match: (line: ChildLine) => line is T,
    timeoutMs = 45_000,
  ): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(
            `child never printed the awaited line; it printed ${JSON.stringify(lines)}; stderr:\n${stderr}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { child, lines, waitFor, exited, send: (line: string) => child.stdin.write(`${line}\n`) };
}

/** Kills the children still running (a test's `finally`). */
export async function killButlerChildren(children: readonly ButlerChild[]): Promise<void> {
  for (const { child, exited } of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

export const isType =
  <K extends AdapterEvent['type']>(type: K) =>
  (line: ChildLine): line is Extract<AdapterEvent, { type: K }> =>
    'type' in line && line.type === type;
export const isReady = (line: ChildLine): line is { ready: true } => 'ready' in line;
export const isStopped = (line: ChildLine): line is { stopped: true } => 'stopped' in line;
