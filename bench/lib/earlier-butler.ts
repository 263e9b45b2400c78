import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from './processes.js';

/**
 * Butler as it was at an earlier commit, checked out beside this one (a git worktree sharing this
 * checkout's node_modules), so that a benchmark can measure before and after in the same run: this
 * machine's speed varies too much between runs for figures of different runs to be compared.
 */

const run = promisify(execFile);

/** The commit before issue 14's work: the "before" of its CPU and throughput figures. */
export const beforeIssue14 = '09059f6';

export interface EarlierCheckout {
  directory: string;
  commit: string;
  remove(): Promise<void>;
}

/** `unavailable` says why when the commit is not in this clone's history or git is missing. */
export async function checkoutEarlierButler(
  commit: string,
): Promise<EarlierCheckout | { unavailable: string }> {
  const directory = join(mkdtempSync(join(tmpdir(), 'butler-earlier-')), 'butler');
  try {
    await run('git', ['worktree', 'add', '--detach', directory, commit], { cwd: repositoryRoot });
  } catch (error) {
    return { unavailable: `could not check out ${commit}: ${(error as Error).message.split('\n')[0]}` };
  }
  symlinkSync(join(repositoryRoot, 'node_modules'), join(directory, 'node_modules'), 'dir');
  return {
    directory,
    commit,
    async remove() {
      await run('git', ['worktree', 'remove', '--force', directory], { cwd: repositoryRoot }).catch(() => {
        rmSync(directory, { recursive: true, force: true });
      });
    },
  };
}
