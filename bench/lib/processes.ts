import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Child processes of a benchmark run: each server under test runs in its own process (its own event
 * loop), in its own process group so that stopping it also stops anything it started. Every child is
 * registered, and killed when the benchmark process exits for whatever reason.
 */

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildService {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The last few kilobytes the process wrote to stderr (for error messages). */
  stderrTail(): string;
  /** Resolves with the exit code; rejects never. */
  readonly exited: Promise<number | null>;
  /** SIGTERM to the process group, SIGKILL after `graceMilliseconds`. */
  stop(graceMilliseconds?: number): Promise<void>;
}

export interface StartOptions {
  name: string;
  /** Arguments to `node`, e.g. ['--import', 'tsx', 'src/main.ts']. */
  nodeArguments: string[];
  env: Record<string, string>;
  /** Open an IPC channel (the child can `process.send`). */
  ipc?: boolean;
  /** Where it runs (another checkout of Butler); the repository by default. */
  cwd?: string;
}

const running = new Set<ChildProcess>();
let exitHooked = false;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

function killAll(): void {
  for (const child of running) signalGroup(child, 'SIGKILL');
}

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Only what a Node child needs from our environment: no stray DATABASE_URL or tokens leak in. */
function baseEnvironment(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TZ'];
  const env: Record<string, string> = {};
  for (const key of keep) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

export function startNodeProcess(options: StartOptions): ChildService {
  hookExit();
  const child = spawn(process.execPath, options.nodeArguments, {
    cwd: options.cwd ?? repositoryRoot,
    env: { ...baseEnvironment(), ...options.env },
    detached: true,
    stdio: options.ipc ? ['ignore', 'ignore', 'pipe', 'ipc'] : ['ignore', 'ignore', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start node`);
  running.add(child);
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  const pid = child.pid;
  return {
    name: options.name,
    child,
    pid,
    stderrTail: () => tail,
    exited,
    async stop(graceMilliseconds = 20_000) {
      if (!running.has(child)) return;
      signalGroup(child, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMilliseconds);
      await exited;
      clearTimeout(timer);
      // Anything the child itself started goes with it.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // The group is empty.
      }
    },
  };
}

/** Waits for the child's first IPC message of `type`; fails if the child exits first. */
export function waitForMessage<T>(
  service: ChildService,
  type: string,
  timeoutMilliseconds = 60_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${service.name}: no "${type}" message within ${timeoutMilliseconds} ms`));
    }, timeoutMilliseconds);
    const onMessage = (message: unknown) => {
      if (typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type) {
        cleanup();
        resolve(message as T);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${service.name} exited (${code}) before "${type}":\n${service.stderrTail()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      service.child.off('message', onMessage);
      service.child.off('exit', onExit);
    };
    service.child.on('message', onMessage);
    service.child.once('exit', onExit);
  });
}

/** Polls `url` until it answers 200; fails if the child exits first. */
export async function waitForHttp(service: ChildService, url: string, timeoutMilliseconds = 90_000) {
  const deadline = Date.now() + timeoutMilliseconds;
  let exitCode: number | null | undefined;
  service.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined)
      throw new Error(`${service.name} exited (${exitCode}) before it was ready:\n${service.stderrTail()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(
        `${service.name} not ready at ${url} within ${timeoutMilliseconds} ms:\n${service.stderrTail()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS and VmHWM (peak resident) of a process, in bytes (Linux /proc). */
export function residentMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}
