import { z } from 'zod';
import { truncateText } from '../../text/index.js';
import { checkArguments } from '../define-tool.js';
import type { ArgumentsCheck, JsonSchema } from '../tool.js';

export type ToolArguments = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The tool's input schema as sent to the model: `$schema` removed (some model APIs reject it) and an empty
 * `properties` added when missing (some reject an object schema without one).
 */
export function toModelParameters(inputSchema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...parameters } = inputSchema;
  return { ...parameters, type: 'object', properties: parameters.properties ?? {} };
}

function rewriteReferences(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteReferences);
  if (!isPlainObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith('#/definitions/')
        ? `#/$defs/${item.slice('#/definitions/'.length)}`
        : rewriteReferences(item);
  }
  return result;
}

/** Draft-07 servers (zod-to-json-schema) put shared definitions under `definitions`; zod reads `$defs`. */
function withDefsKeyword(schema: JsonSchema): JsonSchema {
  if (!('definitions' in schema) || '$defs' in schema) return schema;
  const { definitions, ...rest } = rewriteReferences(schema) as JsonSchema;
  return { ...rest, $defs: definitions };
}

export type ArgumentValidator = (raw: unknown) => ArgumentsCheck<ToolArguments>;

/**
 * Validation of the model's arguments against the tool's input schema before anything runs. A schema zod
 * cannot convert (`if`/`then`, remote `$ref`s) falls back to "any JSON object": the server validates again,
 * and refusing every call of a tool for a schema feature we lack would be worse.
 */
export function argumentValidator(inputSchema: JsonSchema): {
  validate: ArgumentValidator;
  fallbackReason?: string;
} {
  let schema: z.ZodType<ToolArguments> | undefined;
  let fallbackReason: string | undefined;
  try {
    const converted = withDefsKeyword(inputSchema) as Parameters<typeof z.fromJSONSchema>[0];
    schema = z.fromJSONSchema(converted) as z.ZodType<ToolArguments>;
  } catch (error) {
    fallbackReason = error instanceof Error ? error.message : String(error);
  }
  const validate: ArgumentValidator = (raw) => {
    if (!isPlainObject(raw)) return { ok: false, error: 'arguments: expected a JSON object' };
    return schema ? checkArguments(schema, raw) : { ok: true, value: raw };
  };
  return fallbackReason === undefined ? { validate } : { validate, fallbackReason };
}

const maxSummaryChars = 200;
const maxValueChars = 60;

function describeValue(value: unknown): string {
  // Plain words, paths and ids read best bare; anything with spaces or punctuation is quoted.
  if (typeof value === 'string' && /^[\w./:@#-]+$/.test(value)) return truncateText(value, maxValueChars);
  return truncateText(JSON.stringify(value) ?? String(value), maxValueChars);
}

/** One line for the approval card: `github: create_issue(repo=acme/api, title="Fix login")`. */
export function summarizeArguments(server: string, tool: string, input: ToolArguments): string {
  const parts = Object.entries(input).map(([key, value]) => `${key}=${describeValue(value)}`);
  const call = `${server}: ${tool}(${parts.join(', ')})`;
  return call.length <= maxSummaryChars ? call : `${truncateText(call, maxSummaryChars - 1)})`;
}
