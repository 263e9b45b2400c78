import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a stdio server without a configured `cwd` starts: an empty directory of its own (mode 0700), made on
 * first use and removed at stop. Not Butler's working directory, which holds `.env` and the config file. It
 * keeps a server from finding them by relative path; one running as Butler's user can still read them by
 * absolute path, as docs/tools-and-approvals.md says.
 */
export class ScratchDirectory {
  private path: string | undefined;

  /** `name` is a configured server name: letters, digits, `-` and `_` only. */
  constructor(private readonly name: string) {}

  /** The directory, made now if it does not exist yet. */
  get(): string {
    this.path ??= mkdtempSync(join(tmpdir(), `butler-mcp-${this.name}-`));
    return this.path;
  }

  /** Removes it with whatever the server left there; the next `get()` makes a new one. */
  remove(): void {
    if (this.path === undefined) return;
    rmSync(this.path, { recursive: true, force: true });
    this.path = undefined;
  }
}
