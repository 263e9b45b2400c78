import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { cappedFetch } from './capped-fetch.js';
import { describeError } from './error-text.js';
import type { McpServerSettings } from './mcp-settings.js';
import type { McpToolDefinition } from './mcp-tool.js';
import { toCallResult, toToolDefinition } from './sdk-mapping.js';
import type { McpCallResult } from './tool-result.js';

export type McpTransportKind = 'stdio' | 'streamable-http' | 'sse';

export interface ConnectionEvents {
  /** The transport closed (a stdio child exited, the client was closed); not called for `close()`. */
  onClose(): void;
  onError(error: Error): void;
  onToolsChanged(): void;
  onStderrLine(line: string): void;
  /** A close that runs on in the background (a child given time to exit), so `stop()` can wait for it. */
  onClosing(closed: Promise<void>): void;
}

/** A live client session with one MCP server: the only place that talks to the SDK's client. */
export interface McpConnection {
  readonly transportKind: McpTransportKind;
  listTools(options: { signal?: AbortSignal; timeoutMs: number }): Promise<McpToolDefinition[]>;
  callTool(
    name: string,
    input: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<McpCallResult>;
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

function forwardLines(stream: Readable, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (pending + chunk).split(/\r?\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') onLine(line);
  });
  stream.on('end', () => {
    if (pending.trim() !== '') onLine(pending);
  });
}

/** Remembers the child's pid: the SDK forgets it as soon as it starts closing the transport. */
class PidKeepingStdioTransport extends StdioClientTransport {
  spawnedPid: number | null = null;

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends a child whose handshake failed. The SDK closes it itself then, without waiting (it gives the child
 * seconds to exit before SIGTERM), so a hung child would outlive `stop()`: here it gets SIGTERM at once,
 * SIGKILL after a second, and the returned promise settles when it is gone.
 */
async function ensureExited(pid: number | null): Promise<void> {
  if (pid === null || !isRunning(pid)) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + 2_000;
  while (isRunning(pid) && Date.now() < deadline) {
    if (Date.now() > deadline - 1_000) signal('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Per the spec's backwards-compatibility rule: a 4xx to the Streamable HTTP POST means "try the old SSE". */
function worthSseFallback(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError) || error.code === undefined) return false;
  return error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
}

async function connectClient(
  client: Client,
  transport: Transport,
  options: { signal: AbortSignal; timeoutMs: number; onClosing(closed: Promise<void>): void },
): Promise<void> {
  const { signal, timeoutMs } = options;
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = () => reject(signal.reason);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  try {
    // The race also covers transport start-up (spawning, the SSE handshake), which the request timeout misses.
    await Promise.race([client.connect(transport, { signal, timeout: timeoutMs }), aborted]);
  } catch (error) {
    // Not awaited: a child gets seconds to exit, and a failed attempt must not hold start-up beyond its timeout.
    options.onClosing(client.close().catch(() => {}));
    throw error;
  }
}

/**
 * Opens a session: spawns the stdio child or reaches the URL (Streamable HTTP, else SSE), then runs the
 * handshake. `signal` abandons the attempt (timeout, stop) and closes whatever was opened.
 */
export async function openMcpConnection(input: {
  settings: McpServerSettings;
  clientInfo: { name: string; version: string };
  signal: AbortSignal;
  events: ConnectionEvents;
  /** Where a stdio child without a configured `cwd` starts (never Butler's own working directory). */
  workingDirectory: () => string;
  /** HTTP only: wraps the fetch of every request (a person's access token goes with each: `core/connections`). */
  wrapFetch?: (fetch: FetchLike) => FetchLike;
}): Promise<McpConnection> {
  const { settings, events, signal } = input;
  const attempt = { signal, timeoutMs: settings.connectTimeoutMs, onClosing: events.onClosing };
  const newClient = () => {
    const client = new Client(input.clientInfo, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.onToolsChanged());
    return client;
  };
  let client = newClient();
  let transportKind: McpTransportKind;
  let session: StreamableHTTPClientTransport | undefined;
  const { transport: transportSettings } = settings;
  if (transportSettings.kind === 'stdio') {
    const transport = new PidKeepingStdioTransport({
      command: transportSettings.command,
      args: transportSettings.args,
      // Only the configured variables: the SDK adds PATH and HOME (with LOGNAME, SHELL, TERM and USER, sudo's
      // safe list) from Butler's environment and nothing else. The child still runs as Butler's user, so it
      // can read Butler's files and /proc/<pid>/environ: docs/tools-and-approvals.md tells how to run one as another user.
      env: transportSettings.env,
      stderr: 'pipe',
      cwd: transportSettings.cwd ?? input.workingDirectory(),
    });
    const stderr = transport.stderr;
    if (stderr) forwardLines(stderr as Readable, events.onStderrLine);
    try {
      await connectClient(client, transport, attempt);
    } catch (error) {
      events.onClosing(ensureExited(transport.spawnedPid));
      throw error;
    }
    transportKind = 'stdio';
  } else {
    const url = new URL(transportSettings.url);
    const requestInit = { headers: transportSettings.headers };
    const capped = cappedFetch(settings.maxResponseBytes);
    const fetch = input.wrapFetch ? input.wrapFetch(capped) : capped;
    try {
      const transport = new StreamableHTTPClientTransport(url, { requestInit, fetch });
      await connectClient(client, transport, attempt);
      transportKind = 'streamable-http';
      session = transport;
    } catch (streamableError) {
      if (!worthSseFallback(streamableError) || signal.aborted) throw streamableError;
      client = newClient();
      try {
        await connectClient(client, new SSEClientTransport(url, { requestInit, fetch }), attempt);
      } catch (sseError) {
        throw new Error(
          `${describeError(streamableError)}; then the SSE fallback: ${describeError(sseError)}`,
          { cause: sseError },
        );
      }
      transportKind = 'sse';
    }
  }

  let closing = false;
  client.onclose = () => {
    if (!closing) events.onClose();
  };
  // Closing aborts the HTTP streams, which the transport reports as errors: those are not news.
  client.onerror = (error) => {
    if (!closing) events.onError(error);
  };
  const connected = client;
  return {
    transportKind,
    async listTools(options) {
      const tools: McpToolDefinition[] = [];
      let cursor: string | undefined;
      // A bound on pages, so a server that keeps returning a cursor cannot hold the connection forever.
      for (let page = 0; page < 100; page++) {
        const result = await connected.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: options.timeoutMs,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
        tools.push(...result.tools.map(toToolDefinition));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    },
    async callTool(name, args, options) {
      const result: unknown = await connected.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
      });
      return toCallResult(result);
    },
    async ping(pingTimeoutMs) {
      await connected.ping({ timeout: pingTimeoutMs });
    },
    async close() {
      closing = true;
      // Tell a Streamable HTTP server the session is over, but do not wait long for one that is gone.
      if (session) {
        const ended = session.terminateSession().catch(() => {});
        await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      }
      await connected.close();
    },
  };
}
