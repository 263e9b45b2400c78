import { randomBytes } from 'node:crypto';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { ConnectionRecord, ConnectionWaitRecord } from '../contracts/connection-records.js';
import { sharedOwner } from '../contracts/connection-records.js';
import type { Person } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import { distinctPeople, type People } from '../contracts/people.js';
import type { Store } from '../contracts/store.js';
import type { McpOAuthSettings } from '../tools/mcp/mcp-settings.js';
import type { ToolConnection } from '../tools/tool.js';
import { hashOf } from './hash.js';
import { revokeTokens } from './revoke.js';
import type { SecretBox } from './secret-box.js';
import { type ProviderRole, StoredOAuthProvider, tokensContext, verifierContext } from './stored-provider.js';

/**
 * People's connections to OAuth-protected servers: Connect links, the callback, refreshes (one per owner and
 * server at a time, across processes), revocation, and the turns parked until someone connects. The OAuth
 * protocol itself is the MCP SDK's `auth()`; this keeps its state sealed in Postgres.
 */

export interface OAuthServer {
  name: string;
  url: string;
  oauth: McpOAuthSettings;
}

export interface ConnectionOwner {
  key: string;
  /** Who the owner is, as the identity that asked (the shared owner: the admin who connects it). */
  person: Person;
}

export interface ConnectionBookOptions {
  /** Where people's browsers reach Butler: links and the OAuth redirect URI are under it. */
  publicUrl: string;
  /** How long a Connect link works. */
  linkTtlMs: number;
  /** How long one refresh may hold the lease; others wait that long at most. */
  refreshLeaseMs: number;
}

/** Whether a call can run on its connection now, and if not, whether a person can fix that by connecting. */
export type Readiness =
  | { status: 'ready' }
  | { status: 'refused'; reason: string }
  | { status: 'missing'; server: string; owner: ConnectionOwner };

export type Connected = { ok: true; server: string; owner: ConnectionOwner } | { ok: false; reason: string };

/** Paths Butler serves for people's browsers, under the public URL. */
export const connectPath = '/connect/';
export const callbackPath = '/oauth/callback';

/** A refresh ahead of expiry by this much, so a call never starts with a token about to lapse. */
const refreshAheadMs = 60_000;
const leasePollMs = 100;

export class ConnectionBook {
  private readonly servers: ReadonlyMap<string, OAuthServer>;
  private readonly refreshing = new Map<string, Promise<'ready' | 'missing'>>();
  private readonly connectedListeners = new Set<(server: string, owner: ConnectionOwner) => Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
    readonly people: People,
    servers: readonly OAuthServer[],
    private readonly options: ConnectionBookOptions,
    private readonly logger: Logger,
  ) {
    this.servers = new Map(servers.map((server) => [server.name, server]));
  }

  /** How long a Connect link works. */
  get linkTtlMs(): number {
    return this.options.linkTtlMs;
  }

  serverNames(): string[] {
    return [...this.servers.keys()];
  }

  identityOf(server: string): McpOAuthSettings['identity'] | undefined {
    return this.servers.get(server)?.oauth.identity;
  }

  /** Whose connection a call of `server` asked by `person` uses. */
  ownerFor(server: string, person: Person): ConnectionOwner {
    return this.identityOf(server) === 'shared'
      ? { key: sharedOwner, person }
      : { key: this.people.keyOf(person), person };
  }

  /**
   * Whether a call of a tool acting with `connection`, asked by `requesters`, can run now: a person's
   * account is used only when one person asked (the turn cannot tell whose account otherwise).
   */
  async readiness(connection: ToolConnection, requesters: readonly Person[]): Promise<Readiness> {
    const { server } = connection;
    const asking = distinctPeople(this.people, requesters);
    const [person] = asking;
    if (connection.identity === 'person' && (asking.length !== 1 || !person)) {
      const names = asking.map((one) => this.people.nameOf(one) ?? one.name ?? one.id).join(', ');
      return {
        status: 'refused',
        reason: `${server} acts as the person who asked, and several people (${names}) asked in this turn: whose ${server} account to use is not clear. One of them asks again in a message of their own.`,
      };
    }
    if (!person) return { status: 'refused', reason: `${server} needs someone who asked.` };
    const owner = this.ownerFor(server, person);
    let fresh: 'ready' | 'missing';
    try {
      fresh = await this.ensureFresh(server, owner.key);
    } catch (error) {
      this.logger.warn({ err: error, server, owner: owner.key }, 'refreshing a connection failed');
      return {
        status: 'refused',
        reason: `the connection to ${server} could not be refreshed just now; try again later.`,
      };
    }
    if (fresh === 'ready') return { status: 'ready' };
    if (connection.identity === 'shared')
      return {
        status: 'refused',
        reason: `${server} uses one shared connection, which an admin has not made yet (or which has lapsed): an admin connects it in the console, under Connections.`,
      };
    return { status: 'missing', server, owner };
  }

  /** Runs after every completed connection, before the turns waiting for it go on (a tool list refresh). */
  onConnected(listener: (server: string, owner: ConnectionOwner) => Promise<void>): void {
    this.connectedListeners.add(listener);
  }

  get(server: string, ownerKey: string): Promise<ConnectionRecord | undefined> {
    return this.store.connections.get(server, ownerKey);
  }

  /** The SDK provider the MCP transport uses for one owner: the access token, and no flow of its own. */
  transportProvider(server: string, owner: ConnectionOwner): StoredOAuthProvider {
    return this.provider(server, owner, { kind: 'transport' });
  }

  /**
   * Makes sure the owner's tokens are fresh: refreshed ahead of expiry, once across processes. `missing`
   * when there is no connection, or the server refused the refresh (the person connects again).
   */
  async ensureFresh(server: string, ownerKey: string): Promise<'ready' | 'missing'> {
    const record = await this.store.connections.get(server, ownerKey);
    if (!record) return 'missing';
    if (!record.expiresAt || record.expiresAt.getTime() > Date.now() + refreshAheadMs) return 'ready';
    return this.refresh(server, record);
  }

  /** After the server refused a token of `version`: refresh it, unless someone already did. */
  async refreshAfterRejection(
    server: string,
    ownerKey: string,
    version: number,
  ): Promise<'ready' | 'missing'> {
    const record = await this.store.connections.get(server, ownerKey);
    if (!record) return 'missing';
    if (record.version !== version) return 'ready';
    return this.refresh(server, record);
  }

  /** One refresh per owner and server: in this process by a shared promise, across processes by a lease. */
  private refresh(server: string, seen: ConnectionRecord): Promise<'ready' | 'missing'> {
    const key = `${server}\0${seen.ownerKey}`;
    const running = this.refreshing.get(key);
    if (running) return running;
    const refresh = this.refreshUnderLease(server, seen).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, refresh);
    return refresh;
  }

  private async refreshUnderLease(server: string, seen: ConnectionRecord): Promise<'ready' | 'missing'> {
    const { connections } = this.store;
    const deadline = Date.now() + this.options.refreshLeaseMs;
    while (!(await connections.takeRefreshLease(server, seen.ownerKey, new Date(deadline)))) {
      // Someone else refreshes: their tokens are ours once they saved them (a new version).
      const now = await connections.get(server, seen.ownerKey);
      if (!now) return 'missing';
      if (now.version !== seen.version) return 'ready';
      if (Date.now() > deadline)
        throw new Error(`the refresh of ${server} by another Butler process did not end`);
      await new Promise((resolve) => setTimeout(resolve, leasePollMs));
    }
    try {
      const current = await connections.get(server, seen.ownerKey);
      if (!current) return 'missing';
      if (current.version !== seen.version) return 'ready';
      const owner = { key: current.ownerKey, person: current.owner };
      const provider = this.provider(server, owner, { kind: 'refresh' });
      const result = await auth(provider, { serverUrl: this.serverUrl(server) });
      const after = await connections.get(server, seen.ownerKey);
      if (result === 'AUTHORIZED' && after) {
        this.logger.info({ server, owner: owner.key }, 'connection refreshed');
        return 'ready';
      }
      // The SDK deletes the tokens when the server refused the refresh token (revoked, or reused elsewhere):
      // the person connects again. Kept tokens mean the server failed otherwise (a 5xx): not the person's doing.
      if (after) throw new Error(`the authorization server of ${server} did not refresh the connection`);
      this.logger.warn({ server, owner: owner.key }, 'connection lapsed: the refresh was refused');
      return 'missing';
    } finally {
      await connections.releaseRefreshLease(server, seen.ownerKey);
    }
  }

  /** The access token of `as`'s connection (refreshed when due), for HTTP tools; undefined when there is none. */
  async token(server: string, as: Person): Promise<{ token: string; version: number } | undefined> {
    const owner = this.ownerFor(server, as);
    if ((await this.ensureFresh(server, owner.key)) === 'missing') return undefined;
    const record = await this.store.connections.get(server, owner.key);
    if (!record) return undefined;
    const tokens = JSON.parse(this.box.open(record.tokens, tokensContext(server, owner.key))) as {
      access_token: string;
    };
    return { token: tokens.access_token, version: record.version };
  }

  /** The server refused `as`'s token of `version`: true once it is refreshed (here or elsewhere). */
  async rejected(server: string, as: Person, version: number): Promise<boolean> {
    return (await this.refreshAfterRejection(server, this.ownerFor(server, as).key, version)) === 'ready';
  }

  /** A new single-use Connect link for `owner`; only a hash of it is stored. */
  async offerLink(server: string, owner: ConnectionOwner): Promise<{ url: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.options.linkTtlMs);
    await this.store.connections.createFlow({
      server,
      ownerKey: owner.key,
      owner: owner.person,
      linkHash: hashOf(token),
      expiresAt,
    });
    return { url: `${this.options.publicUrl}${connectPath}${token}`, expiresAt };
  }

  /** What a link is for, while it can still be used: the confirmation page shows it before using it. */
  async peekLink(token: string): Promise<{ server: string; person: string } | undefined> {
    const flow = await this.store.connections.findFlow(hashOf(token));
    if (!flow || flow.openedAt || flow.expiresAt.getTime() <= Date.now()) return undefined;
    return {
      server: flow.server,
      person: this.people.nameOf(flow.owner) ?? flow.owner.name ?? flow.owner.id,
    };
  }

  /** A link was used: the authorization URL to send the browser to, once per link. */
  async openLink(token: string): Promise<{ ok: true; url: URL } | { ok: false; reason: string }> {
    const flow = await this.store.connections.openFlow(hashOf(token), new Date());
    if (!flow)
      return { ok: false, reason: 'This link was used already or has expired. Ask Butler for a new one.' };
    const server = this.servers.get(flow.server);
    if (!server) return { ok: false, reason: `${flow.server} is no longer configured.` };
    const provider = this.provider(
      flow.server,
      { key: flow.ownerKey, person: flow.owner },
      { kind: 'link', flowId: flow.id },
    );
    await auth(provider, { serverUrl: server.url, ...scopeOf(server) });
    if (!provider.authorizationUrl) throw new Error(`${flow.server} gave no authorization URL`);
    return { ok: true, url: provider.authorizationUrl };
  }

  /**
   * The authorization server sent the browser back. The `state` finds the flow, which completes once; a
   * replayed, forged or late callback changes nothing. The turns waiting for this connection go on.
   */
  async complete(input: { state?: string; code?: string; error?: string }): Promise<Connected> {
    if (!input.state) return { ok: false, reason: 'The callback has no state.' };
    const flow = await this.store.connections.completeFlow(hashOf(input.state), new Date());
    if (!flow?.verifier) return { ok: false, reason: 'This sign-in was completed already, or has expired.' };
    if (input.error || !input.code)
      return { ok: false, reason: `The sign-in was not completed (${input.error ?? 'no code'}).` };
    const server = this.servers.get(flow.server);
    if (!server) return { ok: false, reason: `${flow.server} is no longer configured.` };
    const owner = { key: flow.ownerKey, person: flow.owner };
    const verifier = this.box.open(flow.verifier, verifierContext(flow.id));
    const provider = this.provider(flow.server, owner, { kind: 'callback', flowId: flow.id, verifier });
    await auth(provider, { serverUrl: server.url, authorizationCode: input.code, ...scopeOf(server) });
    this.logger.info({ server: flow.server, owner: owner.key }, 'connection made');
    for (const listener of this.connectedListeners)
      await listener(flow.server, owner).catch((error: unknown) =>
        this.logger.warn({ err: error, server: flow.server }, 'after connecting: a listener failed'),
      );
    const waits = await this.store.transaction(async (tx) => {
      const connected = await tx.connections.connectWaits(flow.server, owner.key);
      for (const wait of connected) await enqueueContinuation(tx, wait);
      return connected;
    });
    if (waits.length > 0)
      this.logger.info({ server: flow.server, waits: waits.length }, 'parked turns go on');
    return { ok: true, server: flow.server, owner };
  }

  /** Ends waits past their deadline: their turns go on without the calls. */
  async expireWaits(): Promise<number> {
    const expired = await this.store.transaction(async (tx) => {
      const waits = await tx.connections.expireWaits(new Date());
      for (const wait of waits) await enqueueContinuation(tx, wait);
      return waits;
    });
    return expired.length;
  }

  /**
   * Revokes the tokens at the server when it offers revocation (RFC 7009) and deletes them. False when the
   * owner had no connection there.
   */
  async disconnect(server: string, ownerKey: string): Promise<{ deleted: boolean; revoked: boolean }> {
    const record = await this.store.connections.get(server, ownerKey);
    if (!record) return { deleted: false, revoked: false };
    let revoked = false;
    try {
      const provider = this.provider(server, { key: ownerKey, person: record.owner }, { kind: 'refresh' });
      revoked = await revokeTokens(
        provider,
        JSON.parse(this.box.open(record.tokens, tokensContext(server, ownerKey))),
      );
    } catch (error) {
      this.logger.warn(
        { err: error, server, owner: ownerKey },
        'revoking at the server failed; tokens deleted anyway',
      );
    }
    const deleted = await this.store.connections.delete(server, ownerKey);
    return { deleted, revoked };
  }

  /** The tool list the first connection saw, as the MCP server gave it; undefined before anyone connected. */
  toolList(server: string): Promise<unknown[] | undefined> {
    return this.store.connections.toolList(server);
  }

  saveToolList(server: string, tools: readonly unknown[]): Promise<void> {
    return this.store.connections.saveToolList(server, [...tools]);
  }

  list(ownerKeys?: readonly string[]): Promise<ConnectionRecord[]> {
    return this.store.connections.list(ownerKeys);
  }

  serverUrl(server: string): string {
    const found = this.servers.get(server);
    if (!found) throw new Error(`no OAuth server is named ${server}`);
    return found.url;
  }

  private provider(server: string, owner: ConnectionOwner, role: ProviderRole): StoredOAuthProvider {
    const found = this.servers.get(server);
    if (!found) throw new Error(`no OAuth server is named ${server}`);
    return new StoredOAuthProvider(
      {
        repository: this.store.connections,
        box: this.box,
        server,
        oauth: found.oauth,
        redirectUrl: `${this.options.publicUrl}${callbackPath}`,
      },
      owner,
      role,
    );
  }
}

const scopeOf = (server: OAuthServer) =>
  server.oauth.scopes ? { scope: server.oauth.scopes.join(' ') } : {};

/** The inbox work that continues a parked turn, once per wait (its id is the deduplication key). */
function enqueueContinuation(store: Store, wait: ConnectionWaitRecord) {
  return store.inbox.insert({
    platform: wait.platform,
    dedupKey: `connection-wait:${wait.id}`,
    conversationKey: wait.conversationKey,
    userId: wait.requestedBy.id,
    payload: { kind: 'connected', waitId: wait.id },
  });
}
