/** What every room knows about a tool without knowing tools: its risk, its argument schema, its origin. */

export const risks = ['low', 'medium', 'high'] as const;
export type Risk = (typeof risks)[number];

/** JSON Schema of a tool's arguments, as sent to the model in `function.parameters`. */
export type JsonSchema = Record<string, unknown>;

/** Where a tool comes from: shown on approval cards and recorded in the audit log. */
export type ToolOrigin =
  | { kind: 'builtin' }
  | { kind: 'http' }
  | { kind: 'mcp'; server: string; tool: string };
