import { arrayField, asRecord, type JsonRecord, stringField } from './fields.js';

/**
 * Rich-text (`post`) messages → text, and the files they carry. Pure functions.
 *
 * Received posts are `{title, content: [[element…]…]}`, sometimes wrapped per locale (`{"zh_cn": {…}}`) and
 * sometimes with a flat `content: [element…]` (larksuite/node-sdk `channel/normalize/converters/post.ts`; the
 * flat and `files[]` shapes as clients send them: NousResearch/hermes-agent#114154, chenhg5/cc-connect#1884).
 * Elements: `text`, `md`, `a{href}`, `at{user_id, user_name}` where `user_id` is a placeholder (`@_user_1`) or a
 * real id (an open_id; node-sdk's converter looks it up by open_id), `img`, `media`, `emotion`, `hr`,
 * `code_block`, and `file{file_key, file_name}`. Files sent with text arrive in a top-level
 * `files[{file_key, file_name, is_folder}]` (send side: `{key, name, is_folder}`, larksuite/cli#2515).
 */

/**
 * Turns a mention into the text to show. `reference` is a placeholder (`@_user_1`, `@_all`) or, for a post's
 * `at` tag, the id it carries; `name` is the tag's `user_name`. Returns '' for the bot itself.
 */
export type MentionResolver = (reference: string, name?: string) => string;

const mentionPlaceholder = /@_user_\d+|@_all/g;

export function replaceMentions(text: string, resolve: MentionResolver): string {
  return text.replace(mentionPlaceholder, (key) => resolve(key));
}

/** The file notes Butler adds for attachments it cannot open (the same wording as for Slack files). */
export function fileNote(name: string | undefined, isFolder = false): string {
  return `[attached ${isFolder ? 'folder' : 'file'}: ${name ?? 'unnamed'}; Butler cannot open attachments]`;
}

/** Whether the message's own files reach the core (`InboundMessage.files`), so no note says Butler cannot open them. */
export interface PostTextOptions {
  filesFetched?: boolean;
}

function postElementText(element: JsonRecord, resolve: MentionResolver, options: PostTextOptions): string {
  const text = stringField(element, 'text') ?? '';
  switch (element.tag) {
    case 'text':
    case 'md':
      return replaceMentions(text, resolve);
    case 'a': {
      const href = stringField(element, 'href');
      return href ? `[${text || href}](${href})` : text;
    }
    case 'at': {
      const reference = stringField(element, 'user_id');
      const name = stringField(element, 'user_name');
      if (reference) return resolve(reference, name);
      return name ? `@${name}` : '';
    }
    case 'img':
      return '[image]';
    case 'media':
      return '[video]';
    case 'file': {
      const name = stringField(element, 'file_name');
      return options.filesFetched && stringField(element, 'file_key')
        ? `[file: ${name ?? 'unnamed'}]`
        : fileNote(name);
    }
    case 'emotion':
      return `:${stringField(element, 'emoji_type') ?? 'emoji'}:`;
    case 'hr':
      return '\n---\n';
    case 'code_block':
      return `\n\`\`\`${stringField(element, 'language')?.toLowerCase() ?? ''}\n${text}\n\`\`\`\n`;
    default:
      return text;
  }
}

/** The `{title, content}` part, unwrapped from a locale wrapper when there is one. */
function postBody(parsed: JsonRecord): JsonRecord | undefined {
  if (Array.isArray(parsed.content)) return parsed;
  return Object.values(parsed)
    .map(asRecord)
    .find((value) => Array.isArray(value?.content));
}

/** Paragraphs of elements; a flat `content: [element…]` is one paragraph. */
function paragraphs(body: JsonRecord): JsonRecord[][] {
  const content = arrayField(body, 'content');
  const rows = content.every((item) => asRecord(item) !== undefined) ? [content] : content;
  return rows.map((row) =>
    (Array.isArray(row) ? row : []).map(asRecord).filter((element) => element !== undefined),
  );
}

function attachedFiles(parsed: JsonRecord, body: JsonRecord | undefined): JsonRecord[] {
  const files = [
    ...arrayField(parsed, 'files'),
    ...(body && body !== parsed ? arrayField(body, 'files') : []),
  ];
  return files.map(asRecord).filter((file) => file !== undefined);
}

/** A top-level attached file's key and name (received `{file_key, file_name}`, sent `{key, name}`). */
function attachedKey(file: JsonRecord): string | undefined {
  return stringField(file, 'file_key') ?? stringField(file, 'key');
}

function attachedName(file: JsonRecord): string | undefined {
  return stringField(file, 'file_name') ?? stringField(file, 'name');
}

export function postText(
  parsed: JsonRecord,
  resolve: MentionResolver,
  options: PostTextOptions = {},
): string {
  const body = postBody(parsed);
  const rows = body ? paragraphs(body) : [];
  const lines = rows.map((row) => row.map((element) => postElementText(element, resolve, options)).join(''));
  const inlineKeys = new Set(
    rows.flat().flatMap((element) => (element.tag === 'file' ? [stringField(element, 'file_key')] : [])),
  );
  const files = attachedFiles(parsed, body)
    .filter((file) => {
      const key = attachedKey(file);
      if (key !== undefined && inlineKeys.has(key)) return false;
      // A file Butler fetches is described by the core; folders and keyless entries keep their note.
      return !(options.filesFetched && key !== undefined && file.is_folder !== true);
    })
    .map((file) => fileNote(attachedName(file), file.is_folder === true));
  const title = stringField(body, 'title');
  return [...(title ? [title] : []), ...lines, ...files].join('\n');
}

/** The `user_id` of every `at` tag: how a post can mention someone even when `mentions[]` is empty. */
export function postAtReferences(parsed: JsonRecord): string[] {
  const body = postBody(parsed);
  if (!body) return [];
  return paragraphs(body)
    .flat()
    .filter((element) => element.tag === 'at')
    .map((element) => stringField(element, 'user_id'))
    .filter((reference) => reference !== undefined);
}

/** A file in a post that the message-resource API serves: `img` and `media` elements, `file` elements, `files[]`. */
export interface PostResource {
  fileKey: string;
  name: string | undefined;
  kind: 'image' | 'video' | 'file';
}

export function postResources(parsed: JsonRecord): PostResource[] {
  const body = postBody(parsed);
  const inline = (body ? paragraphs(body) : []).flat().flatMap((element): PostResource[] => {
    const name = stringField(element, 'file_name');
    if (element.tag === 'img') {
      const fileKey = stringField(element, 'image_key');
      return fileKey ? [{ fileKey, name: undefined, kind: 'image' }] : [];
    }
    const fileKey = stringField(element, 'file_key');
    if (!fileKey) return [];
    if (element.tag === 'media') return [{ fileKey, name, kind: 'video' }];
    return element.tag === 'file' ? [{ fileKey, name, kind: 'file' }] : [];
  });
  const attached = attachedFiles(parsed, body).flatMap((file): PostResource[] => {
    const fileKey = attachedKey(file);
    return fileKey && file.is_folder !== true ? [{ fileKey, name: attachedName(file), kind: 'file' }] : [];
  });
  const seen = new Set<string>();
  return [...inline, ...attached].filter((resource) => {
    if (seen.has(resource.fileKey)) return false;
    seen.add(resource.fileKey);
    return true;
  });
}
