import { createHash } from 'node:crypto';
import { z } from 'zod';
import { truncateText } from '../text.js';
import { checkArguments } from './define-tool.js';
import type { JsonSchema, Risk, Tool } from './tool.js';

/** A tool defined in the config file that calls an HTTP endpoint with the validated arguments. */
export interface HttpToolDefinition {
  name: string;
  description: string;
  risk: Risk;
  input: JsonSchema;
  http: {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    url: string;
    headers: Record<string, string>;
    timeoutMs: number;
    maxResponseChars: number;
  };
}

/** Same key for the same tool call however often it is retried, so the endpoint can deduplicate. */
export function idempotencyKey(conversationKey: string, callId: string): string {
  return createHash('sha256').update(`${conversationKey}\n${callId}`).digest('hex').slice(0, 32);
}

function describeArguments(input: unknown): string {
  if (input && typeof input === 'object') {
    const parts = Object.entries(input).map(
      ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
    );
    if (parts.length > 0) return truncateText(parts.join(', '), 200);
  }
  return 'no arguments';
}

export function createHttpTool(definition: HttpToolDefinition): Tool<Record<string, unknown>> {
  const schema = z.fromJSONSchema(definition.input as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<
    Record<string, unknown>
  >;
  const { http } = definition;
  return {
    name: definition.name,
    description: definition.description,
    risk: definition.risk,
    parameters: definition.input,
    parse: (raw) => checkArguments(schema, raw),
    summarize: (input) => `${definition.description.replace(/\.$/, '')} (${describeArguments(input)})`,
    async execute(input, context) {
      const url = new URL(http.url);
      const hasBody = http.method !== 'GET' && http.method !== 'DELETE';
      if (!hasBody) {
        for (const [key, value] of Object.entries(input)) {
          url.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
        }
      }
      const response = await fetch(url, {
        method: http.method,
        headers: {
          ...http.headers,
          'idempotency-key': idempotencyKey(context.conversationKey, context.callId),
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(hasBody ? { body: JSON.stringify(input) } : {}),
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(http.timeoutMs)]),
      });
      const text = truncateText(await response.text(), http.maxResponseChars);
      if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}: ${text}`);
      return text || `HTTP ${response.status} (empty body)`;
    },
  };
}
