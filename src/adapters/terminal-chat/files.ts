import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, parse, resolve } from 'node:path';
import type { FileBytes } from '../../core/contracts/files.js';
import { formatBytes } from '../../core/text/index.js';

/** Files in the terminal chat: `/attach` reads one from disk, and what Butler sends is saved beside it. */

/** What `/attach <path> [message]` shares: the file and the message, or why it cannot (quote a path with spaces). */
export async function readAttachment(
  argument: string,
  maxBytes: number,
): Promise<{ ok: true; file: FileBytes; text: string } | { ok: false; message: string }> {
  const match = /^(?:"([^"]+)"|(\S+))\s*([\s\S]*)$/.exec(argument.trim());
  const path = match?.[1] ?? match?.[2];
  if (!path) return { ok: false, message: 'Say which file: /attach <path> [message]' };
  const full = resolve(path);
  const found = await stat(full).catch(() => undefined);
  if (!found) return { ok: false, message: `No file at ${full}.` };
  if (!found.isFile()) return { ok: false, message: `${full} is not a file.` };
  if (found.size > maxBytes)
    return {
      ok: false,
      message: `${path} is ${formatBytes(found.size)}; Butler takes files up to ${formatBytes(maxBytes)} (files.maxFileMegabytes).`,
    };
  // The type is left to Butler, which looks at the bytes and the name.
  const file = { name: basename(full), mimeType: 'application/octet-stream', bytes: await readFile(full) };
  return { ok: true, file, text: match?.[3] ?? '' };
}

/** The name without folders or control characters; `file` when nothing is left. */
function fileName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const base = basename(name.replaceAll('\\', '/')).replace(/[\u0000-\u001f\u007f]/g, '');
  return base.trim() === '' || /^\.+$/.test(base) ? 'file' : base;
}

/** Saves a file under `directory` (made when missing), never over another: `errors-1.csv`, `errors-2.csv`… */
export async function saveFile(directory: string, name: string, bytes: Uint8Array): Promise<string> {
  await mkdir(directory, { recursive: true });
  const { name: stem, ext } = parse(fileName(name));
  for (let copy = 0; ; copy += 1) {
    const path = join(directory, copy === 0 ? `${stem}${ext}` : `${stem}-${copy}${ext}`);
    try {
      // `wx` fails when the file exists, even if another process wrote it a moment ago.
      await writeFile(path, bytes, { flag: 'wx' });
      return path;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
