import type { Risk } from '../tool.js';

/** The behaviour hints of an MCP tool (all optional; the spec's defaults are the pessimistic ones). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * Risk of an MCP tool: the config override wins; untrusted annotations make it high; annotations that
 * contradict each other (`readOnlyHint` with `destructiveHint: true`) make it high; `readOnlyHint` → low;
 * an explicit `destructiveHint: false` → medium; anything else is high, as the spec defaults
 * `destructiveHint` to true.
 */
export function mcpToolRisk(input: {
  tool: string;
  annotations: McpToolAnnotations | undefined;
  overrides: Readonly<Record<string, Risk>>;
  trustAnnotations: boolean;
}): Risk {
  const override = Object.hasOwn(input.overrides, input.tool) ? input.overrides[input.tool] : undefined;
  if (override) return override;
  if (!input.trustAnnotations) return 'high';
  if (input.annotations?.readOnlyHint === true && input.annotations.destructiveHint === true) return 'high';
  if (input.annotations?.readOnlyHint === true) return 'low';
  if (input.annotations?.destructiveHint === false) return 'medium';
  return 'high';
}
