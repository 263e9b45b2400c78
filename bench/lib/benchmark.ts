import { join } from 'node:path';

/** What every benchmark script exports, and what bench/run.ts gives it. */

export interface BenchmarkContext {
  /** A short smoke run (`npm run bench -- --quick`): same code, smaller numbers. */
  quick: boolean;
  /** When set, Butler processes write CPU profiles (node --cpu-prof) into this directory. */
  cpuProfileDirectory: string | undefined;
  log(message: string): void;
  /** The name a file written beside the results will have (quick and partial runs prefix theirs). */
  outputName(fileName: string): string;
}

/** One of the aims, and where this run stands. */
export interface Aim {
  aim: string;
  measured: string;
  met: boolean;
}

export interface BenchmarkOutput {
  /** Markdown: tables and notes, without the section heading. */
  markdown: string;
  /** The aims this benchmark checks, for the summary at the top of the results. */
  aims?: Aim[];
  /** Extra files written beside the results (e.g. an SVG chart), by file name. */
  files?: Record<string, string>;
}

export interface Benchmark {
  /** Used on the command line: `npm run bench -- ingest`. */
  name: string;
  title: string;
  run(context: BenchmarkContext): Promise<BenchmarkOutput>;
}

/**
 * Node flags for a Butler process: CPU profiling when asked for, one directory per label (the main
 * thread's profile is the largest file; tsx's loader thread writes its own).
 */
export function profilingFlags(context: BenchmarkContext, label: string): string[] {
  if (!context.cpuProfileDirectory) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${join(context.cpuProfileDirectory, label)}`];
}

/** Pauses processes (SIGSTOP) while `work` runs, so they take no CPU from what is being measured. */
export async function whilePaused<T>(pids: number | readonly number[], work: () => Promise<T>): Promise<T> {
  const paused = typeof pids === 'number' ? [pids] : pids;
  for (const pid of paused) process.kill(pid, 'SIGSTOP');
  try {
    return await work();
  } finally {
    for (const pid of paused) process.kill(pid, 'SIGCONT');
  }
}
