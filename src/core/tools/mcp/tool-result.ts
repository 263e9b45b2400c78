import { basename } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { FileBytes } from '../../contracts/files.js';
import { formatBytes, graphemePrefix } from '../../text/index.js';

/**
 * The parts of an MCP `tools/call` result Butler uses, as plain types (the SDK's zod-inferred types are
 * loose and change between protocol versions; `mcp-connection.ts` maps them onto these).
 */
export type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | {
      type: 'resource';
      resource: { uri: string; mimeType?: string; text?: string; blob?: string };
    }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string }
  | { type: 'unknown'; originalType: string };

/** A call the server did not finish: it asks for input first (MCP 2026-07-28 `input_required`). */
export interface McpInputRequired {
  inputRequired: { inputRequests: unknown; requestState?: string };
}

export interface McpCallResult {
  content: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** Decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const length = data.replace(/\s/g, '').length;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((length * 3) / 4) - padding);
}

function describeContent(content: McpContent): string {
  switch (content.type) {
    case 'text':
      return content.text;
    case 'image':
    case 'audio':
      return `[${content.type}: ${content.mimeType}, ${formatBytes(base64Bytes(content.data))}]`;
    case 'resource': {
      const { resource } = content;
      const mimeType = resource.mimeType ? `, ${resource.mimeType}` : '';
      if (resource.text !== undefined) return `[resource: ${resource.uri}${mimeType}]\n${resource.text}`;
      const size = resource.blob === undefined ? '' : `, ${formatBytes(base64Bytes(resource.blob))}`;
      return `[resource: ${resource.uri}${mimeType}${size}]`;
    }
    case 'resource_link': {
      const mimeType = content.mimeType ? `, ${content.mimeType}` : '';
      const description = content.description ? `: ${content.description}` : '';
      return `[resource link: ${content.name} <${content.uri}>${mimeType}${description}]`;
    }
    case 'unknown':
      return `[${content.originalType} content, not shown]`;
  }
}

function parsesTo(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

/** The leaves of a JSON value, or undefined when one of them is not a string. */
function stringLeaves(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return undefined;
  const leaves: string[] = [];
  for (const item of Object.values(value)) {
    const inner = stringLeaves(item);
    if (inner === undefined) return undefined;
    leaves.push(...inner);
  }
  return leaves;
}

/**
 * Whether the text blocks already say what the structured content says: a block is its JSON (what the
 * spec asks servers to send), or every value in it is a string the text contains (the filesystem server
 * sends the file as text and again as `{"content": "…"}`). Numbers and booleans are never assumed to be
 * in the prose: "33" could appear there by chance.
 */
function carriedByText(content: readonly McpContent[], structured: Record<string, unknown>): boolean {
  const texts = content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
  if (texts.some((text) => parsesTo(text, structured))) return true;
  const leaves = stringLeaves(structured);
  if (leaves === undefined || leaves.length === 0) return false;
  const joined = texts.join('\n');
  return leaves.every((leaf) => joined.includes(leaf.trim()));
}

/**
 * Cuts `text` to at most `maxChars` characters, marker included, and says how much was cut. Never splits a
 * surrogate pair.
 */
export function truncateResult(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // The marker's own length depends on the number it prints; one pass with the worst case is enough.
  const marker = (cut: number) => `\n[truncated: ${cut} of ${text.length} characters cut]`;
  const kept = graphemePrefix(text, Math.max(0, maxChars - marker(text.length).length));
  return `${kept}${marker(text.length - kept.length)}`;
}

/**
 * Text for the model from an MCP tool result: content blocks in order, text as is, binary content described
 * rather than inlined (a base64 image means nothing to a text model and would eat the context). The
 * structured content is added as compact JSON unless the text already carries it: showing the same thing
 * twice only spends the model's budget.
 */
export function formatToolResult(result: McpCallResult, maxChars: number): string {
  const parts = result.content.map(describeContent);
  const structured = result.structuredContent;
  if (structured !== undefined) {
    if (!carriedByText(result.content, structured)) parts.push(JSON.stringify(structured));
  }
  const text = parts.join('\n');
  return truncateResult(text === '' ? '(no content)' : text, maxChars);
}

/**
 * The files in an MCP tool result: images, audio and binary resources (base64 in the protocol), which
 * Butler sends into the conversation; the model reads only their one-line description.
 */
export function toolResultFiles(result: McpCallResult, toolName: string): FileBytes[] {
  const files: FileBytes[] = [];
  for (const content of result.content) {
    const decode = (data: string) => new Uint8Array(Buffer.from(data, 'base64'));
    if (content.type === 'image' || content.type === 'audio') {
      const extension = content.mimeType.split('/')[1]?.replace(/[^\w]/g, '') || 'bin';
      files.push({
        name: `${toolName}-${files.length + 1}.${extension}`,
        mimeType: content.mimeType,
        bytes: decode(content.data),
      });
    }
    if (content.type === 'resource' && content.resource.blob !== undefined) {
      const fromUri = basename(content.resource.uri.replace(/[?#].*$/, ''));
      files.push({
        name: fromUri.includes('.') ? fromUri : `${toolName}-${files.length + 1}.bin`,
        mimeType: content.resource.mimeType ?? 'application/octet-stream',
        bytes: decode(content.resource.blob),
      });
    }
  }
  return files;
}
