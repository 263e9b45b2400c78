// A globSync for the one pattern the suite uses, `**/<name>`: every file called <name> under `cwd`, relative paths.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*/]+)$/.exec(pattern);
  if (!match)
    throw new Error(`this Node 20 stand-in for fs.globSync reads only "**/<name>" patterns, not ${pattern}`);
  const root = options.cwd ?? process.cwd();
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name === match[1])
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)));
}
