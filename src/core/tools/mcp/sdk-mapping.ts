import type { Tool as SdkTool } from '@modelcontextprotocol/client';
import type { McpToolDefinition } from './mcp-tool.js';
import type { McpCallResult, McpContent } from './tool-result.js';
import type { McpToolAnnotations } from './tool-risk.js';

/** The SDK's results are zod-inferred with open index signatures: read them as `unknown` and keep what we use. */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function annotationsOf(value: unknown): McpToolAnnotations | undefined {
  if (!isRecord(value)) return undefined;
  const annotations: McpToolAnnotations = {};
  if (typeof value.title === 'string') annotations.title = value.title;
  for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    const flag = value[hint];
    if (typeof flag === 'boolean') annotations[hint] = flag;
  }
  return annotations;
}

export function toToolDefinition(tool: SdkTool): McpToolDefinition {
  const definition: McpToolDefinition = {
    name: tool.name,
    inputSchema: isRecord(tool.inputSchema) ? { ...tool.inputSchema } : { type: 'object' },
  };
  const title = optionalString(tool.title);
  if (title !== undefined) definition.title = title;
  const description = optionalString(tool.description);
  if (description !== undefined) definition.description = description;
  const annotations = annotationsOf(tool.annotations);
  if (annotations !== undefined) definition.annotations = annotations;
  return definition;
}

function toContent(block: unknown): McpContent {
  if (!isRecord(block)) return { type: 'unknown', originalType: typeof block };
  const type = optionalString(block.type) ?? 'untyped';
  switch (type) {
    case 'text':
      return { type: 'text', text: optionalString(block.text) ?? '' };
    case 'image':
    case 'audio':
      return {
        type,
        data: optionalString(block.data) ?? '',
        mimeType: optionalString(block.mimeType) ?? 'unknown type',
      };
    case 'resource': {
      const resource = isRecord(block.resource) ? block.resource : {};
      const mimeType = optionalString(resource.mimeType);
      const text = optionalString(resource.text);
      const blob = optionalString(resource.blob);
      return {
        type: 'resource',
        resource: {
          uri: optionalString(resource.uri) ?? '(no uri)',
          ...(mimeType === undefined ? {} : { mimeType }),
          ...(text === undefined ? {} : { text }),
          ...(blob === undefined ? {} : { blob }),
        },
      };
    }
    case 'resource_link': {
      const mimeType = optionalString(block.mimeType);
      const description = optionalString(block.description);
      return {
        type: 'resource_link',
        uri: optionalString(block.uri) ?? '(no uri)',
        name: optionalString(block.name) ?? optionalString(block.uri) ?? 'resource',
        ...(mimeType === undefined ? {} : { mimeType }),
        ...(description === undefined ? {} : { description }),
      };
    }
    default:
      return { type: 'unknown', originalType: type };
  }
}

/** A `tools/call` result, including the pre-2025 `toolResult` shape some old servers still send. */
export function toCallResult(raw: unknown): McpCallResult {
  if (!isRecord(raw)) return { content: [], isError: false };
  if (!Array.isArray(raw.content) && 'toolResult' in raw) {
    return { content: [{ type: 'text', text: JSON.stringify(raw.toolResult) }], isError: false };
  }
  const content = Array.isArray(raw.content) ? raw.content.map(toContent) : [];
  const result: McpCallResult = { content, isError: raw.isError === true };
  if (isRecord(raw.structuredContent)) result.structuredContent = raw.structuredContent;
  return result;
}
