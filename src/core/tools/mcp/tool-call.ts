import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { InputAnswer } from '../../contracts/input-needed.js';
import { describeError } from './error-text.js';
import type { McpConnection } from './mcp-connection.js';
import { McpToolCallError } from './mcp-errors.js';
import type { Asker } from './session-questions.js';
import type { McpCallResult, McpInputRequired } from './tool-result.js';

/** An answer the server gave that the SDK could not take (not a sign that the connection is broken). */
const answeredBadly = (error: unknown) =>
  error instanceof SdkError &&
  (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType);

/**
 * A failed `tools/call` as a typed error whose message tells the model what happened and whether the tool
 * may have run. `connectionSuspect` is true when the failure was not an answer from the server (a network
 * error, an expired HTTP session), so the caller should check the connection.
 */
export function toCallError(
  error: unknown,
  context: {
    server: string;
    tool: string;
    timeoutMs: number;
    aborted: boolean;
    redact(text: string): string;
  },
): { error: McpToolCallError; connectionSuspect: boolean } {
  const { server, tool } = context;
  const location = { server, tool };
  if (context.aborted) {
    return {
      error: new McpToolCallError(
        'mcp_tool_cancelled',
        location,
        `The call to ${tool} on ${server} was cancelled.`,
      ),
      connectionSuspect: false,
    };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    const message = `The MCP tool ${tool} on ${server} did not answer within ${context.timeoutMs} ms; the call was cancelled and may have partly run.`;
    return { error: new McpToolCallError('mcp_tool_timeout', location, message), connectionSuspect: false };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) {
    const message = `The connection to the MCP server ${server} was lost during the call; ${tool} may or may not have run.`;
    return { error: new McpToolCallError('mcp_call_failed', location, message), connectionSuspect: true };
  }
  const reason = context.redact(describeError(error));
  return {
    error: new McpToolCallError(
      'mcp_call_failed',
      location,
      `The MCP call ${tool} on ${server} failed: ${reason}`,
      {
        cause: error,
      },
    ),
    connectionSuspect: !(error instanceof ProtocolError || answeredBadly(error)),
  };
}

/**
 * One `tools/call` over the connection that is live when the call starts: refused at once when the
 * server is down (the tool did not run), cancelled with the turn, timed out per server.
 */
export async function callLiveTool(input: {
  server: string;
  tool: string;
  input: Record<string, unknown>;
  /** The person's answers to what the server asked when the call was made before. */
  answer?: InputAnswer | undefined;
  /** How what the server asks during the call reaches the person. */
  asker?: Asker | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  redact(text: string): string;
  /** The live connection, after waiting for an attempt in progress; or why there is none. */
  liveConnection(): Promise<McpConnection | { unavailable: string | undefined }>;
  /** Told when a failure hints that the connection itself is broken. */
  onSuspectConnection(connection: McpConnection): void;
}): Promise<McpCallResult | McpInputRequired> {
  const { server, tool, signal } = input;
  const failure = (error: unknown) =>
    toCallError(error, {
      server,
      tool,
      timeoutMs: input.timeoutMs,
      aborted: signal.aborted,
      redact: input.redact,
    });
  if (signal.aborted) throw failure(signal.reason).error;
  const connection = await input.liveConnection();
  if ('unavailable' in connection) {
    const reason = connection.unavailable ? ` (${connection.unavailable})` : '';
    throw new McpToolCallError(
      'mcp_server_unavailable',
      { server, tool },
      `The MCP server ${server} is not available${reason}; the tool ${tool} did not run.`,
    );
  }
  try {
    return await connection.callTool(tool, input.input, {
      signal,
      timeoutMs: input.timeoutMs,
      ...(input.answer ? { answer: input.answer } : {}),
      ...(input.asker ? { asker: input.asker } : {}),
    });
  } catch (caught) {
    const { error, connectionSuspect } = failure(caught);
    if (connectionSuspect) input.onSuspectConnection(connection);
    throw error;
  }
}
