import { createHash } from 'node:crypto';

/** What model APIs accept as a function name (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

const maxLength = 64;
const hashLength = 8;

/**
 * The model-facing name of an MCP tool: `{server}__{tool}`, characters outside `[a-zA-Z0-9_-]` replaced by
 * `_`. A name over 64 characters keeps its first 55 and ends in `_` plus 8 hex characters of a hash of the
 * unsanitised full name, so it stays the same across restarts and processes and two long names that share
 * a prefix stay apart.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  const sanitised = full.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
  if (sanitised.length <= maxLength) return sanitised;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, hashLength);
  return `${sanitised.slice(0, maxLength - hashLength - 1)}_${hash}`;
}
