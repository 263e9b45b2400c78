import { InsufficientScopeError, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';
import { ConnectionNeededError } from '../contracts/connection-needed.js';
import type { ConnectionOwner } from '../contracts/connection-records.js';
import type { Person } from '../contracts/events.js';
import type { InputAnswer } from '../contracts/input-needed.js';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../tools/mcp/error-text.js';
import { type McpConnection, openMcpConnection } from '../tools/mcp/mcp-connection.js';
import type { McpServerSettings } from '../tools/mcp/mcp-settings.js';
import type { McpToolDefinition } from '../tools/mcp/mcp-tool.js';
import { createRedactor } from '../tools/mcp/redact.js';
import type { Asker } from '../tools/mcp/session-questions.js';
import type { ToolArguments } from '../tools/mcp/tool-arguments.js';
import { callLiveTool } from '../tools/mcp/tool-call.js';
import { buildToolList } from '../tools/mcp/tool-list.js';
import type { McpCallResult, McpInputRequired } from '../tools/mcp/tool-result.js';
import type { ToolSource } from '../tools/registry.js';
import type { Tool } from '../tools/tool.js';
import { type BearerState, bearerFetch } from './bearer-fetch.js';
import { connectTool } from './connect-tool.js';
import type { ConnectionBook } from './connection-book.js';

/**
 * An MCP server behind OAuth: every call runs on its owner's own session (the person who asked, or the shared
 * connection), opened on demand with that owner's token and closed when idle. Its tools are known from the
 * first connection anyone made (kept in Postgres, refreshed by later ones); before that only
 * `<server>__connect` is offered, which connects the person who asks.
 */

interface Session {
  connection: McpConnection;
  /** The version of the token it sent last: a 401 refreshes only if no one has since. */
  bearer: BearerState;
  lastUsed: number;
  /** Calls running on it now: a call may wait long (for its person's answer), and its session stays open. */
  calls: number;
}

/**
 * The HTTP status an MCP request failed with (401, 403), found along the error's causes. Without an OAuth
 * provider of its own the SDK reports a 401 as `UnauthorizedError` and a step-up 403 as `InsufficientScopeError`.
 */
const httpStatusOf = (error: unknown): number | undefined => {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof SdkHttpError) return cause.status;
    if (cause instanceof UnauthorizedError) return 401;
    if (cause instanceof InsufficientScopeError) return 403;
  }
  return undefined;
};

const scopesIn = (scope: string | null | undefined) => (scope ?? '').split(' ').filter(Boolean);

export class AccountMcpServer implements ToolSource {
  readonly name: string;
  private readonly sessions = new Map<string, Promise<Session>>();
  private readonly listeners = new Set<(tools: readonly Tool[]) => void>();
  private readonly closing = new Set<Promise<void>>();
  private readonly redact: (text: string) => string;
  private listed: readonly Tool[] = [];
  private listJson = '';
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: McpServerSettings & { transport: { kind: 'http' } },
    private readonly book: ConnectionBook,
    private readonly logger: Logger,
    private readonly options: { idleMs: number; clientInfo: { name: string; version: string } } = {
      idleMs: 300_000,
      clientInfo: { name: 'butler', version: '0.1.0' },
    },
  ) {
    this.name = settings.name;
    this.redact = createRedactor({
      configuredValues: Object.values(settings.transport.headers),
      secrets: settings.secrets ?? [],
    });
    book.onConnected(async (server, owner) => {
      if (server === this.name) await this.listAs(owner);
    });
  }

  /** Reads the stored tool list; never throws (a failure leaves only the connect tool, and is logged). */
  async start(): Promise<void> {
    await this.whenSettled();
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(1_000, this.options.idleMs / 2));
    this.idleTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.idleTimer);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const session of sessions)
      void session.then(
        (open) => this.close(open.connection),
        () => {},
      );
    await Promise.all([...this.closing]);
  }

  tools(): readonly Tool[] {
    return this.settings.oauth?.identity === 'person'
      ? [connectTool(this.name, this.book), ...this.listed]
      : this.listed;
  }

  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Picks up a list another process stored (a continuation after someone connected there). */
  async whenSettled(): Promise<void> {
    try {
      const stored = await this.book.toolList(this.name);
      if (stored) this.setList(stored as McpToolDefinition[]);
    } catch (error) {
      this.logger.warn({ err: error, mcpServer: this.name }, 'could not read the stored tool list');
    }
  }

  /** In words, for /readyz and the banner. */
  describe(): string {
    const identity =
      this.settings.oauth?.identity === 'shared' ? 'one shared connection' : "each person's own account";
    const known =
      this.listed.length > 0 ? `${this.listed.length} tools` : 'tools known once someone connects';
    return `OAuth, ${identity}; ${known}`;
  }

  /** Lists the tools on `owner`'s session and keeps the list (the first connection, and later ones). */
  private async listAs(owner: ConnectionOwner): Promise<void> {
    const session = await this.session(owner);
    const definitions = await session.connection.listTools({ timeoutMs: this.settings.connectTimeoutMs });
    await this.book.saveToolList(this.name, definitions);
    this.setList(definitions);
  }

  private setList(definitions: readonly McpToolDefinition[]): void {
    const json = JSON.stringify(definitions);
    if (json === this.listJson) return;
    this.listJson = json;
    this.listed = buildToolList({
      definitions,
      settings: this.settings,
      call: (tool, input, options) => this.callAs(tool, input, options),
      warn: (_key, fields, message) => this.logger.warn({ mcpServer: this.name, ...fields }, message),
    });
    this.logger.info({ mcpServer: this.name, tools: this.listed.length }, 'mcp tool list of an OAuth server');
    for (const listener of this.listeners) listener(this.tools());
  }

  /** One call as `as`: refreshed first when due; after a 401, refreshed once and tried again. */
  private async callAs(
    tool: string,
    input: ToolArguments,
    options: {
      signal: AbortSignal;
      as: Person;
      answer?: InputAnswer | undefined;
      asker?: Asker | undefined;
    },
  ): Promise<McpCallResult | McpInputRequired> {
    const owner = this.book.ownerFor(this.name, options.as);
    for (let attempt = 0; ; attempt++) {
      if ((await this.book.ensureFresh(this.name, owner.key)) === 'missing')
        throw new ConnectionNeededError(this.name, owner);
      let session: Session | undefined;
      let suspect = false;
      try {
        session = await this.session(owner);
        const live = session;
        live.calls += 1;
        try {
          return await callLiveTool({
            server: this.name,
            tool,
            input,
            answer: options.answer,
            asker: options.asker,
            signal: options.signal,
            timeoutMs: this.settings.timeoutMs,
            redact: this.redact,
            liveConnection: async () => live.connection,
            onSuspectConnection: () => {
              suspect = true;
            },
          });
        } finally {
          live.calls -= 1;
          live.lastUsed = Date.now();
        }
      } catch (error) {
        const status = httpStatusOf(error);
        const unauthorized = status === 401;
        // A broken session is opened anew by the next call; a 401 says nothing about the session.
        if (suspect && !unauthorized && session) this.drop(owner.key, session);
        const challenge = session?.bearer.challenge;
        if (status === 403 && challenge?.error === 'insufficient_scope')
          throw await this.scopeNeeded(owner, challenge.scope);
        if (!unauthorized || attempt > 0) throw error;
        // The session stays: other calls are on it, and its transport reads the token for every request.
        const version =
          session?.bearer.sentVersion ?? (await this.book.get(this.name, owner.key))?.version ?? 0;
        if ((await this.book.refreshAfterRejection(this.name, owner.key, version)) === 'missing')
          throw new ConnectionNeededError(this.name, owner);
      }
    }
  }

  /**
   * The server wants a scope the connection lacks (a step-up, 403 `insufficient_scope`): the person authorizes
   * again, for the scopes held and those asked (the call waits, as for a missing connection). When the
   * connection holds them all already, asking again would loop: the call fails instead.
   */
  private async scopeNeeded(owner: ConnectionOwner, asked: string | undefined): Promise<Error> {
    const held = scopesIn((await this.book.get(this.name, owner.key))?.scope);
    const wanted = scopesIn(asked);
    if (wanted.length === 0 || wanted.every((scope) => held.includes(scope)))
      return new Error(
        `${this.name} refused the call for want of a scope${asked ? ` ("${asked}")` : ''} the connection already has; Butler does not ask for it again`,
      );
    return new ConnectionNeededError(this.name, owner, [...new Set([...held, ...wanted])].join(' '));
  }

  /** The owner's open session, opened once however many calls ask at the same time. */
  private session(owner: ConnectionOwner): Promise<Session> {
    const open = this.sessions.get(owner.key);
    if (open)
      return open.then((session) => {
        session.lastUsed = Date.now();
        return session;
      });
    const opening = this.open(owner);
    this.sessions.set(owner.key, opening);
    opening.catch(() => {
      if (this.sessions.get(owner.key) === opening) this.sessions.delete(owner.key);
    });
    return opening;
  }

  private async open(owner: ConnectionOwner): Promise<Session> {
    const bearer: BearerState = { sentVersion: undefined, challenge: undefined };
    const signal = AbortSignal.timeout(this.settings.connectTimeoutMs);
    let connection: McpConnection | undefined;
    connection = await openMcpConnection({
      settings: this.settings,
      clientInfo: this.options.clientInfo,
      signal,
      wrapFetch: (fetch) => bearerFetch(fetch, () => this.book.accessToken(this.name, owner.key), bearer),
      workingDirectory: () => {
        throw new Error('an HTTP server has no working directory');
      },
      events: {
        onClose: () => {
          if (connection) this.forget(owner.key, connection);
        },
        onError: (error) =>
          this.logger.debug(
            { mcpServer: this.name, error: this.redact(describeError(error)) },
            'mcp transport error',
          ),
        onToolsChanged: () => void this.listAs(owner).catch(() => {}),
        onStderrLine: () => {},
        onClosing: (closed) => this.track(closed),
        onQuestionDeclined: (why) =>
          this.logger.warn({ mcpServer: this.name, why }, 'declined a question the server asked'),
      },
    });
    return { connection, bearer, lastUsed: Date.now(), calls: 0 };
  }

  private drop(ownerKey: string, session: Session): void {
    this.forget(ownerKey, session.connection);
    this.close(session.connection);
  }

  private forget(ownerKey: string, connection: McpConnection): void {
    const current = this.sessions.get(ownerKey);
    void current?.then(
      (session) => {
        if (session.connection === connection && this.sessions.get(ownerKey) === current)
          this.sessions.delete(ownerKey);
      },
      () => {},
    );
  }

  private closeIdle(): void {
    const before = Date.now() - this.options.idleMs;
    for (const [ownerKey, pending] of this.sessions)
      void pending.then(
        (session) => {
          const idle = session.calls === 0 && session.lastUsed < before;
          if (idle && this.sessions.get(ownerKey) === pending) {
            this.sessions.delete(ownerKey);
            this.close(session.connection);
          }
        },
        () => {},
      );
  }

  private close(connection: McpConnection): void {
    this.track(connection.close().catch(() => {}));
  }

  private track(closed: Promise<void>): void {
    this.closing.add(closed);
    void closed.finally(() => this.closing.delete(closed));
  }
}
