import { onPlatform, type Person } from '../../contracts/events.js';
import { type InputAnswer, InputNeededError } from '../../contracts/input-needed.js';
import { truncateText } from '../../text/index.js';
import type { JsonSchema, Tool } from '../tool.js';
import { toInputRequests } from './input-requests.js';
import { McpToolCallError } from './mcp-errors.js';
import type { McpServerSettings } from './mcp-settings.js';
import type { Asker } from './session-questions.js';
import {
  argumentValidator,
  summarizeArguments,
  type ToolArguments,
  toModelParameters,
} from './tool-arguments.js';
import { mcpToolName } from './tool-name.js';
import {
  formatToolResult,
  type McpCallResult,
  type McpInputRequired,
  toolResultFiles,
} from './tool-result.js';
import { type McpToolAnnotations, mcpToolRisk } from './tool-risk.js';

/** One entry of an MCP server's `tools/list`, as Butler uses it. */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: McpToolAnnotations;
}

/**
 * Calls a tool by its MCP name over whatever connection is live at that moment (never one captured when
 * the tool was built), with the server's timeout and the turn's signal. `as`: the person the call runs as
 * (whose connection an OAuth server's call uses).
 */
export type McpToolCaller = (
  tool: string,
  input: ToolArguments,
  options: { signal: AbortSignal; as: Person; answer?: InputAnswer | undefined; asker?: Asker | undefined },
) => Promise<McpCallResult | McpInputRequired>;

const maxDescriptionChars = 2_000;

function describeTool(definition: McpToolDefinition, server: string): string {
  const text = definition.description?.trim() || definition.title || definition.annotations?.title;
  return truncateText(text || `Tool ${definition.name} of the MCP server ${server}.`, maxDescriptionChars);
}

/** An MCP tool as a Butler tool: same risk policy, approval card and audit path as every other tool. */
export function createMcpTool(input: {
  definition: McpToolDefinition;
  settings: McpServerSettings;
  call: McpToolCaller;
  /** Told once per built tool when its input schema cannot be converted and any JSON object is accepted. */
  onSchemaFallback?: (reason: string) => void;
}): Tool<ToolArguments> {
  const { definition, settings } = input;
  const server = settings.name;
  const { validate, fallbackReason } = argumentValidator(definition.inputSchema);
  if (fallbackReason !== undefined) input.onSchemaFallback?.(fallbackReason);
  return {
    name: mcpToolName(server, definition.name),
    description: describeTool(definition, server),
    parameters: toModelParameters(definition.inputSchema),
    risk: mcpToolRisk({
      tool: definition.name,
      annotations: definition.annotations,
      overrides: settings.risk,
      trustAnnotations: settings.trustAnnotations,
    }),
    origin: { kind: 'mcp', server, tool: definition.name },
    ...(settings.oauth ? { connection: { server, identity: settings.oauth.identity } } : {}),
    parse: validate,
    summarize: (args) => summarizeArguments(server, definition.name, args),
    async execute(args, context) {
      const as = onPlatform(context.requester, context.address.platform);
      const { ask } = context;
      const result = await input.call(definition.name, args, {
        signal: context.signal,
        as,
        answer: context.answer,
        // Who the call is for, as the identity it runs as: calls of one identity may share unnamed questions.
        asker: ask && {
          person: `${as.platform}:${as.id}`,
          ask: (request, signal) => ask(server, request, signal),
        },
      });
      if ('inputRequired' in result) {
        const { inputRequests, requestState } = result.inputRequired;
        const asked = toInputRequests(inputRequests);
        if ('unsupported' in asked)
          throw new McpToolCallError(
            'mcp_call_failed',
            { server, tool: definition.name },
            `${server} did not finish ${definition.name}: ${asked.unsupported}.`,
          );
        throw new InputNeededError(server, asked.requests, requestState);
      }
      const text = formatToolResult(result, settings.maxResultChars);
      if (result.isError) {
        throw new McpToolCallError('mcp_tool_failed', { server, tool: definition.name }, text);
      }
      const files = toolResultFiles(result, definition.name);
      return files.length > 0 ? { text, files } : text;
    },
  };
}
