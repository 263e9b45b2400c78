import type { Readable } from 'node:stream';
import {
  type CallToolRequest,
  Client,
  type FetchLike,
  isInputRequiredResult,
  type PriorDiscovery,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { InputAnswer } from '../../contracts/input-needed.js';
import { cappedFetch } from './capped-fetch.js';
import { describeError } from './error-text.js';
import type { McpServerSettings } from './mcp-settings.js';
import type { McpToolDefinition } from './mcp-tool.js';
import { toCallResult, toToolDefinition } from './sdk-mapping.js';
import { type Asker, SessionQuestions } from './session-questions.js';
import type { McpCallResult, McpInputRequired } from './tool-result.js';

export type McpTransportKind = 'stdio' | 'streamable-http' | 'sse';

export interface ConnectionEvents {
  /** The transport closed (a stdio child exited, the client was closed); not called for `close()`. */
  onClose(): void;
  onError(error: Error): void;
  onToolsChanged(): void;
  onStderrLine(line: string): void;
  /** A close that runs on in the background (a child given time to exit), so `stop()` can wait for it. */
  onClosing(closed: Promise<void>): void;
  /** A question the server pushed over its session was declined without asking anyone, and why. */
  onQuestionDeclined?(why: string): void;
}

/**
 * What Butler lets a server ask of a person mid-call: forms and pages to open (MCP elicitation). Told to a 2025
 * server at `initialize` (it then pushes `elicitation/create` over its session) and to a 2026-07-28 one in the
 * envelope of every request (it then answers `input_required`).
 */
const clientCapabilities = { elicitation: { form: {}, url: {} } };

/** A live client session with one MCP server: the only place that talks to the SDK's client. */
export interface McpConnection {
  readonly transportKind: McpTransportKind;
  /** The MCP revision the handshake settled on: 2026-07-28 (stateless) or a 2025 one. */
  readonly protocolVersion: string | undefined;
  /** What the handshake found, for the next connect to the same server to skip the version probe. */
  readonly era: PriorDiscovery | undefined;
  listTools(options: { signal?: AbortSignal; timeoutMs: number }): Promise<McpToolDefinition[]>;
  /**
   * `answer`: the person's answers to the input the server asked for when this call was made before (2026).
   * `asker`: how a question the server pushes during the call (2025) reaches the person; without, it is declined.
   * `timeoutMs` does not run while the person answers.
   */
  callTool(
    name: string,
    input: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; answer?: InputAnswer; asker?: Asker },
  ): Promise<McpCallResult | McpInputRequired>;
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

/**
 * The SDK's stdio transport, remembering the child's pid: the SDK forgets it as soon as it starts closing.
 * Not a subclass: version negotiation probes on a disposable sibling child only for the SDK's own class (a
 * subclass is probed in place, and a 2025 server that exits on the unknown probe would take the session down).
 */
function pidKeepingStdioTransport(parameters: ConstructorParameters<typeof StdioClientTransport>[0]): {
  transport: StdioClientTransport;
  spawnedPid(): number | null;
} {
  const transport = new StdioClientTransport(parameters);
  let pid: number | null = null;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    pid = transport.pid;
  };
  return { transport, spawnedPid: () => pid };
}

/** How long a stdio child may stay silent on the version probe before it is taken for a 2025 server. */
const STDIO_PROBE_TIMEOUT_MS = 5_000;

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
  if (!(error instanceof SdkHttpError)) return false;
  return error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 403;
}

async function connectClient(
  client: Client,
  transport: Transport,
  options: {
    signal: AbortSignal;
    timeoutMs: number;
    onClosing(closed: Promise<void>): void;
    prior?: PriorDiscovery | undefined;
  },
): Promise<void> {
  const { signal, timeoutMs, prior } = options;
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = () => reject(signal.reason);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  const connecting = client.connect(transport, { signal, timeout: timeoutMs, ...(prior ? { prior } : {}) });
  try {
    // The race also covers transport start-up (spawning, the SSE handshake), which the request timeout misses.
    await Promise.race([connecting, aborted]);
  } catch (error) {
    // Closing the transport itself matters while the version probe runs: the client has no transport yet then,
    // and the SDK reaps its probe child and never starts the session's only when the transport is closed.
    // Not awaited: a child gets seconds to exit, and a failed attempt must not hold start-up beyond its timeout.
    const closed = Promise.allSettled([connecting, transport.close(), client.close()]);
    options.onClosing(settledWithin(closed, 5_000));
    throw error;
  }
}

/** The era verdict of a connected client, as `connect({ prior })` takes it. */
function eraOf(client: Client): PriorDiscovery | undefined {
  if (client.getProtocolEra() === 'legacy') return { kind: 'legacy' };
  const discover = client.getDiscoverResult();
  return discover ? { kind: 'modern', discover } : undefined;
}

/** Resolves when `work` settles or after `ms`, whichever is first: what `stop()` waits for stays bounded. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work.then(() => {}), elapsed]);
  clearTimeout(timer);
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
  /**
   * What the last connect to this server found (`McpConnection.era`): a reconnect (a crashed child restarted)
   * then skips the version probe and its extra child. A server that changed revision meanwhile fails this connect;
   * the caller forgets the verdict, and the next attempt probes.
   */
  prior?: PriorDiscovery | undefined;
}): Promise<McpConnection> {
  const { settings, events, signal } = input;
  const attempt = {
    signal,
    timeoutMs: settings.connectTimeoutMs,
    onClosing: events.onClosing,
    prior: input.prior,
  };
  const questions = new SessionQuestions((why) => events.onQuestionDeclined?.(why));
  const newClient = (versionNegotiation: VersionNegotiationOptions) => {
    const client = new Client(input.clientInfo, {
      capabilities: clientCapabilities,
      versionNegotiation,
      // A bound on pages, so a server that keeps returning a cursor cannot hold the connection forever.
      listMaxPages: 100,
      // A server's question is answered by a person, maybe hours later and in another process: the SDK hands
      // it back (`allowInputRequired`) instead of answering it within the call.
      inputRequired: { autoFulfill: false },
      // Butler refetches on its own schedule (coalesced across servers): the SDK only says that it changed.
      listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => events.onToolsChanged() } },
    });
    // The option above listens only to a server that declares `tools.listChanged` (and subscribes on 2026-07-28);
    // a 2025 server that sends the notification without declaring it is heard too, as before the v2 client.
    client.setNotificationHandler('notifications/tools/list_changed', () => events.onToolsChanged());
    questions.listen(client);
    return client;
  };
  let client: Client;
  let transportKind: McpTransportKind;
  let session: StreamableHTTPClientTransport | undefined;
  const { transport: transportSettings } = settings;
  if (transportSettings.kind === 'stdio') {
    // A 2025 server that stays silent on the probe is found out when the probe times out, so that wait is
    // kept short; one that answers or exits is known at once.
    client = newClient({
      mode: 'auto',
      probe: { timeoutMs: Math.min(settings.connectTimeoutMs, STDIO_PROBE_TIMEOUT_MS) },
    });
    const child = pidKeepingStdioTransport({
      command: transportSettings.command,
      args: transportSettings.args,
      // Only the configured variables: the SDK adds PATH and HOME (with LOGNAME, SHELL, TERM and USER, sudo's
      // safe list) from Butler's environment and nothing else. The child still runs as Butler's user, so it
      // can read Butler's files and /proc/<pid>/environ: docs/tools-and-approvals.md tells how to run one as another user.
      env: transportSettings.env,
      stderr: 'pipe',
      cwd: transportSettings.cwd ?? input.workingDirectory(),
    });
    const stderr = child.transport.stderr;
    if (stderr) forwardLines(stderr as Readable, events.onStderrLine);
    try {
      await connectClient(client, child.transport, attempt);
    } catch (error) {
      events.onClosing(ensureExited(child.spawnedPid()));
      throw error;
    }
    transportKind = 'stdio';
  } else {
    const url = new URL(transportSettings.url);
    const requestInit = { headers: transportSettings.headers };
    const capped = cappedFetch(settings.maxResponseBytes);
    const fetch = input.wrapFetch ? input.wrapFetch(capped) : capped;
    client = newClient({ mode: 'auto' });
    try {
      const transport = new StreamableHTTPClientTransport(url, { requestInit, fetch });
      await connectClient(client, transport, attempt);
      transportKind = 'streamable-http';
      session = transport;
    } catch (streamableError) {
      if (!worthSseFallback(streamableError) || signal.aborted) throw streamableError;
      // The old HTTP+SSE transport predates the 2026 protocol: nothing to negotiate there.
      client = newClient({ mode: 'legacy' });
      try {
        await connectClient(client, new SSEClientTransport(url, { requestInit, fetch }), {
          ...attempt,
          prior: undefined,
        });
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
    protocolVersion: connected.getNegotiatedProtocolVersion(),
    era: eraOf(connected),
    async listTools(options) {
      // Every page, walked by the SDK (which also keeps the list to validate structured results against).
      const result = await connected.listTools(undefined, {
        timeout: options.timeoutMs,
        cacheMode: 'refresh',
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      return result.tools.map(toToolDefinition);
    },
    async callTool(name, args, options) {
      const { answer } = options;
      const params = {
        name,
        arguments: args,
        ...(answer ? { inputResponses: answer.responses } : {}),
        ...(answer?.requestState === undefined ? {} : { requestState: answer.requestState }),
      } as CallToolRequest['params'];
      const result: unknown = await questions.run(options, (signal, timeout) =>
        connected.callTool(params, { signal, timeout, allowInputRequired: true }),
      );
      if (isInputRequiredResult(result)) {
        const { inputRequests, requestState } = result;
        return { inputRequired: { inputRequests, ...(requestState === undefined ? {} : { requestState }) } };
      }
      return toCallResult(result);
    },
    async ping(pingTimeoutMs) {
      // 2026-07-28 has no `ping`: asking the server what it offers is the cheapest request that it answers.
      if (connected.getProtocolEra() === 'modern') await connected.discover({ timeout: pingTimeoutMs });
      else await connected.ping({ timeout: pingTimeoutMs });
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
