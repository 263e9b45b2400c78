import { ButlerError } from '../../contracts/errors.js';

export type McpToolCallErrorCode =
  /** The server was down when the call started: the tool did not run. */
  | 'mcp_server_unavailable'
  /** The tool answered `isError: true`; the message is its formatted output. */
  | 'mcp_tool_failed'
  /** No answer within the server's `timeoutMs`; the server was told to cancel. */
  | 'mcp_tool_timeout'
  /** The turn was aborted; the server was told to cancel. */
  | 'mcp_tool_cancelled'
  /** Anything else: a protocol error from the server, or the connection lost mid-call. */
  | 'mcp_call_failed';

/** A failed MCP tool call; the message is what the model reads as the tool error. */
export class McpToolCallError extends ButlerError {
  declare readonly code: McpToolCallErrorCode;
  readonly server: string;
  readonly tool: string;

  constructor(
    code: McpToolCallErrorCode,
    location: { server: string; tool: string },
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.server = location.server;
    this.tool = location.tool;
  }
}

/** A connection attempt that failed or took longer than `connectTimeoutMs`; recorded, never thrown to Butler. */
export class McpConnectionError extends ButlerError {
  readonly server: string;

  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super('mcp_connection_failed', message, options);
    this.server = server;
  }
}
