import { includeFilter } from '../name-patterns.js';
import type { Tool } from '../tool.js';
import type { McpServerSettings } from './mcp-settings.js';
import { createMcpTool, type McpToolCaller, type McpToolDefinition } from './mcp-tool.js';

/** Reports a configuration or server oddity; the caller logs each `key` once. */
export type ToolListWarning = (key: string, fields: Record<string, unknown>, message: string) => void;

/**
 * The Butler tools of one listing: the include filter applied, names made model-safe, and the second of
 * two tools that end up with the same name left out (`a.b` and `a_b` both become `a_b`).
 */
export function buildToolList(input: {
  definitions: readonly McpToolDefinition[];
  settings: McpServerSettings;
  call: McpToolCaller;
  warn: ToolListWarning;
}): readonly Tool[] {
  const { definitions, settings, warn } = input;
  const included = includeFilter(settings.include);
  const byName = new Map<string, string>();
  const tools: Tool[] = [];
  for (const definition of definitions) {
    if (!included(definition.name)) continue;
    const tool = createMcpTool({
      definition,
      settings,
      call: input.call,
      onSchemaFallback: (reason) =>
        warn(
          `schema:${definition.name}:${reason}`,
          { tool: definition.name, reason },
          'mcp tool input schema not convertible; any JSON object accepted',
        ),
    });
    const taken = byName.get(tool.name);
    if (taken !== undefined) {
      warn(
        `clash:${tool.name}`,
        { tool: definition.name, clashesWith: taken, name: tool.name },
        'two mcp tools get the same name; the second is left out',
      );
      continue;
    }
    byName.set(tool.name, definition.name);
    tools.push(tool);
  }
  // A typo in a risk override would silently leave a tool at its annotated risk: say so.
  for (const name of Object.keys(settings.risk)) {
    if (!definitions.some((definition) => definition.name === name)) {
      warn(`override:${name}`, { tool: name }, 'mcp risk override names no tool of this server');
    }
  }
  return Object.freeze(tools);
}
