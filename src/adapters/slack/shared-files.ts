import type { InboundFile } from '../../core/contracts/files.js';
import { isRecord } from './parse.js';

/**
 * A message's `files[]` → the files Butler fetches (`InboundMessage.files`) and notes for the ones it cannot.
 * Pure functions.
 *
 * Slack's file object (docs.slack.dev "File object"; platforms.md "Slack files"): `id`, `name`, `title`,
 * `mimetype`, `filetype`, `size`, `mode`, `is_external`, `url_private`, `url_private_download`. Files in
 * `mode` `tombstone` (deleted), `hidden_by_limit` (past a free plan's history) or `external` (a Google Drive
 * link, say) have no bytes on Slack to download.
 */

type Json = Record<string, unknown>;

function text(record: Json, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined;
}

/** Why a file's bytes are out of reach, in a few words for the model. */
const external = 'stored outside Slack; Butler cannot open it';
const unreadableModes: ReadonlyMap<string, string> = new Map([
  ['tombstone', 'the file was deleted'],
  ['hidden_by_limit', "hidden by the workspace's plan limit"],
  ['external', external],
]);

function unreadableReason(file: Json): string | undefined {
  const byMode = unreadableModes.get(text(file, 'mode') ?? '');
  return byMode ?? (file.is_external === true ? external : undefined);
}

/** The file as the core fetches it, or undefined when Slack holds no bytes Butler may download. */
export function fetchableFile(file: unknown): InboundFile | undefined {
  if (!isRecord(file) || unreadableReason(file) !== undefined) return undefined;
  const key = text(file, 'id');
  const locator = text(file, 'url_private_download') ?? text(file, 'url_private');
  if (!key || !locator) return undefined;
  const mimeType = text(file, 'mimetype');
  const size = file.size;
  return {
    key,
    name: text(file, 'name') ?? text(file, 'title') ?? key,
    ...(mimeType ? { mimeType } : {}),
    ...(typeof size === 'number' && Number.isFinite(size) && size >= 0 ? { size } : {}),
    locator,
  };
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** A message's files Butler can fetch, in Slack's order. */
export function sharedFiles(files: unknown): InboundFile[] {
  return records(files).flatMap((file) => fetchableFile(file) ?? []);
}

/**
 * One line per file the model will not see (Butler describes the fetched ones itself): deleted, hidden,
 * external, or, with `all`, every file (a forwarded message's files, which Butler does not fetch).
 */
export function describeFiles(files: unknown, options: { all?: boolean } = {}): string[] {
  return records(files)
    .filter((file) => options.all === true || fetchableFile(file) === undefined)
    .map((file) => {
      const name = text(file, 'name') ?? text(file, 'title') ?? 'unnamed';
      const type = text(file, 'mimetype') ?? text(file, 'filetype');
      const kind = type?.startsWith('image/') ? 'image' : 'file';
      const reason = unreadableReason(file) ?? 'Butler cannot open attachments';
      return `[attached ${kind}: ${name}${type ? ` (${type})` : ''}; ${reason}]`;
    });
}
