import type { PriorDiscovery } from '@modelcontextprotocol/client';
import type { InputAnswer } from '../../contracts/input-needed.js';
import type { Logger } from '../../contracts/logger.js';
import type { Tool } from '../tool.js';
import { coalesce } from './coalesce.js';
import { describeError } from './error-text.js';
import { type McpConnection, type McpTransportKind, openMcpConnection } from './mcp-connection.js';
import { McpConnectionError } from './mcp-errors.js';
import type { McpServerSettings } from './mcp-settings.js';
import type { McpToolDefinition } from './mcp-tool.js';
import { createRedactor } from './redact.js';
import { ScratchDirectory } from './scratch-directory.js';
import type { Asker } from './session-questions.js';
import { StderrTail } from './stderr-tail.js';
import type { ToolArguments } from './tool-arguments.js';
import { callLiveTool } from './tool-call.js';
import { buildToolList } from './tool-list.js';
import type { McpCallResult, McpInputRequired } from './tool-result.js';

export type McpServerState = 'connecting' | 'connected' | 'down' | 'stopped';

export interface McpServerStatus {
  state: McpServerState;
  /** Why the last attempt failed or the connection was lost (secrets redacted); cleared once connected. */
  error?: string;
  /** Tools offered right now (0 unless connected). */
  tools: number;
  /** How the live connection was made, when connected. */
  transport?: McpTransportKind;
  /** The MCP revision the live connection speaks (2026-07-28 or a 2025 one), when connected. */
  protocolVersion?: string | undefined;
}

export interface McpServerOptions {
  /** Backoff between attempts while down: doubles from `initialDelayMs` up to `maxDelayMs`. */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  clientInfo?: { name: string; version: string };
  /**
   * HTTP only: how often a connected server is pinged. The HTTP client never closes on its own when a
   * server goes away, so without this a drop is noticed only at the next call or stream error. 0 = never.
   */
  pingIntervalMs?: number;
}

export type ToolsListener = (tools: readonly Tool[]) => void;

const noTools: readonly Tool[] = Object.freeze([]);

/**
 * One configured MCP server, supervised: connects without ever throwing or blocking past its timeout,
 * offers its tools only while connected, restarts a crashed child and reconnects with backoff.
 */
export class McpServer {
  readonly name: string;
  private readonly logger: Logger;
  private readonly redact: (text: string) => string;
  private readonly reconnect: { initialDelayMs: number; maxDelayMs: number };
  private readonly clientInfo: { name: string; version: string };
  private readonly pingIntervalMs: number;
  private readonly listeners = new Set<ToolsListener>();
  private readonly closing = new Set<Promise<void>>();
  private readonly warned = new Set<string>();
  private state: McpServerState = 'stopped';
  private lastError: string | undefined;
  /** What the last connect found (the revision spoken): a reconnect skips the version probe. */
  private era: PriorDiscovery | undefined;
  private connection: McpConnection | undefined;
  private currentTools: readonly Tool[] = noTools;
  private attempt: { controller: AbortController; settled: Promise<void> } | undefined;
  /** Bumped by every attempt and by `stop()`: callbacks of an older connection see it changed and do nothing. */
  private generation = 0;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly refreshTools = coalesce(() => this.listToolsAgain());
  private probing = false;
  private readonly stderr = new StderrTail();
  private readonly scratch: ScratchDirectory;

  constructor(
    private readonly settings: McpServerSettings,
    logger: Logger,
    options: McpServerOptions = {},
  ) {
    this.name = settings.name;
    this.scratch = new ScratchDirectory(settings.name);
    this.logger = logger.child({ mcpServer: settings.name });
    const { transport } = settings;
    this.redact = createRedactor({
      configuredValues: Object.values(transport.kind === 'stdio' ? transport.env : transport.headers),
      secrets: settings.secrets ?? [],
    });
    this.reconnect = options.reconnect ?? { initialDelayMs: 1_000, maxDelayMs: 60_000 };
    this.clientInfo = options.clientInfo ?? { name: 'butler', version: '0.1.0' };
    this.pingIntervalMs = options.pingIntervalMs ?? 30_000;
  }

  /** Connects (or fails) within `connectTimeoutMs`; never throws. A failure leaves it down and retrying. */
  async start(): Promise<void> {
    if (this.state !== 'stopped') return this.whenSettled();
    await this.connect();
  }

  /** Closes the session, stops a stdio child and cancels retries. */
  async stop(): Promise<void> {
    const wasConnected = this.state === 'connected';
    // Only an attempt in progress is aborted: the SDK keeps listening to a finished attempt's signal and
    // would send a cancellation for requests long answered.
    if (this.state === 'connecting')
      this.attempt?.controller.abort(new McpConnectionError(this.name, 'stopped'));
    this.state = 'stopped';
    this.generation++;
    this.failures = 0;
    this.clearTimers();
    const connection = this.connection;
    this.connection = undefined;
    this.currentTools = noTools;
    if (connection) this.closeInBackground(connection);
    await this.attempt?.settled;
    await Promise.all([...this.closing]);
    // The child has exited: nothing works in its scratch directory any more.
    this.scratch.remove();
    if (wasConnected) this.emit();
  }

  status(): McpServerStatus {
    return {
      state: this.state,
      tools: this.tools().length,
      ...(this.lastError === undefined ? {} : { error: this.lastError }),
      ...(this.state === 'connected' && this.connection
        ? { transport: this.connection.transportKind, protocolVersion: this.connection.protocolVersion }
        : {}),
    };
  }

  /** The tools to offer the model now: none unless connected, so a down server's tools leave the prompt. */
  tools(): readonly Tool[] {
    return this.state === 'connected' ? this.currentTools : noTools;
  }

  /** Called after a connect, after a `tools/list_changed` refresh and when the server goes down or stops. */
  onToolsChanged(listener: ToolsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when the attempt in progress, if any, has succeeded or failed. Never rejects. */
  whenSettled(): Promise<void> {
    return this.state === 'connecting' && this.attempt ? this.attempt.settled : Promise.resolve();
  }

  private connect(): Promise<void> {
    const generation = ++this.generation;
    const controller = new AbortController();
    const timeout = setTimeout(
      () =>
        controller.abort(
          new McpConnectionError(this.name, `no answer within ${this.settings.connectTimeoutMs} ms`),
        ),
      this.settings.connectTimeoutMs,
    );
    this.state = 'connecting';
    this.stderr.clear();
    const settled = this.establish(generation, controller.signal).finally(() => clearTimeout(timeout));
    this.attempt = { controller, settled };
    return settled;
  }

  private async establish(generation: number, signal: AbortSignal): Promise<void> {
    let connection: McpConnection | undefined;
    let changedWhileConnecting = false;
    try {
      connection = await openMcpConnection({
        settings: this.settings,
        clientInfo: this.clientInfo,
        signal,
        events: {
          onClose: () => this.connectionLost(connection, 'the connection closed'),
          onError: (error) => this.connectionError(connection, error),
          onToolsChanged: () => {
            // A change announced while the first listing is under way is picked up once connected.
            if (connection === undefined || connection !== this.connection) changedWhileConnecting = true;
            else void this.refreshTools();
          },
          onStderrLine: (line) => this.stderrLine(line),
          onQuestionDeclined: (why) => this.logger.warn({ why }, 'declined a question the server asked'),
          onClosing: (closed) => this.track(closed),
        },
        workingDirectory: () => this.scratch.get(),
        prior: this.era,
      });
      const definitions = await connection.listTools({ signal, timeoutMs: this.settings.connectTimeoutMs });
      if (generation !== this.generation) {
        this.closeInBackground(connection);
        return;
      }
      this.connection = connection;
      this.era = connection.era;
      this.currentTools = this.buildTools(definitions);
      this.state = 'connected';
      this.failures = 0;
      this.lastError = undefined;
      this.logger.info(
        { transport: connection.transportKind, tools: this.currentTools.length },
        'mcp server connected',
      );
      if (connection.transportKind !== 'stdio' && this.pingIntervalMs > 0) {
        const live = connection;
        this.pingTimer = setInterval(() => void this.probe(live), this.pingIntervalMs);
        this.pingTimer.unref();
      }
      this.emit();
      if (changedWhileConnecting) void this.refreshTools();
    } catch (error) {
      if (connection) this.closeInBackground(connection);
      // The server may have changed revision: the next attempt probes again.
      this.era = undefined;
      if (generation !== this.generation) return;
      this.goDown(signal.aborted ? describeError(signal.reason) : describeError(error));
    }
  }

  private connectionLost(connection: McpConnection | undefined, reason: string): void {
    if (!connection || connection !== this.connection) return;
    this.connection = undefined;
    this.closeInBackground(connection);
    this.goDown(connection.transportKind === 'stdio' ? 'the server process exited' : reason);
  }

  private connectionError(connection: McpConnection | undefined, error: Error): void {
    this.logger.debug({ error: this.redact(error.message) }, 'mcp transport error');
    // An HTTP stream error may mean the server is gone, or nothing at all: a ping tells which.
    if (connection && connection.transportKind !== 'stdio') void this.probe(connection);
  }

  private async probe(connection: McpConnection): Promise<void> {
    if (this.probing || connection !== this.connection) return;
    this.probing = true;
    try {
      await connection.ping(this.settings.connectTimeoutMs);
    } catch (error) {
      this.connectionLost(connection, `the server stopped answering: ${describeError(error)}`);
    } finally {
      this.probing = false;
    }
  }

  private goDown(reason: string): void {
    const wasConnected = this.state === 'connected';
    this.clearTimers();
    this.state = 'down';
    this.lastError = this.redact(reason + this.stderr.explanation());
    this.currentTools = noTools;
    const delayMs = Math.min(this.reconnect.initialDelayMs * 2 ** this.failures, this.reconnect.maxDelayMs);
    // The first failure of a streak is worth a warning; the retries of a server that stays down are not.
    const fields = { error: this.lastError, retryInMs: delayMs };
    if (wasConnected || this.failures === 0) this.logger.warn(fields, 'mcp server down');
    else this.logger.debug(fields, 'mcp server still down');
    this.failures++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delayMs);
    this.reconnectTimer.unref();
    if (wasConnected) this.emit();
  }

  /** Re-lists the tools after `list_changed`. */
  private async listToolsAgain(): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    try {
      const definitions = await connection.listTools({ timeoutMs: this.settings.connectTimeoutMs });
      if (connection !== this.connection) return;
      this.currentTools = this.buildTools(definitions);
      this.logger.info({ tools: this.currentTools.length }, 'mcp tool list refreshed');
      this.emit();
    } catch (error) {
      this.logger.warn({ error: this.redact(describeError(error)) }, 'mcp tool list refresh failed');
      if (connection.transportKind !== 'stdio') void this.probe(connection);
    }
  }

  private buildTools(definitions: readonly McpToolDefinition[]): readonly Tool[] {
    return buildToolList({
      definitions,
      settings: this.settings,
      call: (name, input, options) => this.callTool(name, input, options),
      warn: (key, fields, message) => {
        if (this.warned.has(key)) return;
        this.warned.add(key);
        this.logger.warn(fields, message);
      },
    });
  }

  /** Runs one call over the connection live at that moment, never one captured when the tool was built. */
  private callTool(
    tool: string,
    input: ToolArguments,
    options: { signal: AbortSignal; answer?: InputAnswer | undefined; asker?: Asker | undefined },
  ): Promise<McpCallResult | McpInputRequired> {
    return callLiveTool({
      server: this.name,
      tool,
      input,
      answer: options.answer,
      asker: options.asker,
      signal: options.signal,
      timeoutMs: this.settings.timeoutMs,
      redact: this.redact,
      liveConnection: async () => {
        // Right after a restart the server may still be connecting: wait for it rather than fail at once.
        if (this.state === 'connecting') await this.whenSettled();
        const connection = this.state === 'connected' ? this.connection : undefined;
        return connection ?? { unavailable: this.lastError };
      },
      onSuspectConnection: (connection) => {
        if (connection.transportKind !== 'stdio') void this.probe(connection);
      },
    });
  }

  private stderrLine(line: string): void {
    const redacted = this.redact(line);
    this.logger.debug({ stderr: redacted }, 'mcp server stderr');
    this.stderr.push(redacted);
  }

  private emit(): void {
    const tools = this.tools();
    for (const listener of this.listeners) {
      try {
        listener(tools);
      } catch (error) {
        this.logger.error({ error: describeError(error) }, 'mcp tools listener failed');
      }
    }
  }

  private closeInBackground(connection: McpConnection): void {
    this.track(connection.close().catch(() => {}));
  }

  private track(closed: Promise<void>): void {
    this.closing.add(closed);
    void closed.finally(() => this.closing.delete(closed));
  }

  private clearTimers(): void {
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    this.reconnectTimer = undefined;
    this.pingTimer = undefined;
  }
}
