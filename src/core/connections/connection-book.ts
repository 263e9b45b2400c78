import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/client';
import { auth } from '@modelcontextprotocol/client';
import type {
  ConnectionOwner,
  ConnectionRecord,
  ConnectionWaitRecord,
} from '../contracts/connection-records.js';
import { sharedOwner } from '../contracts/connection-records.js';
import type { Person } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import { distinctPeople, type People } from '../contracts/people.js';
import type { Store } from '../contracts/store.js';
import type { McpOAuthSettings } from '../tools/mcp/mcp-settings.js';
import type { ToolConnection } from '../tools/tool.js';
import { challengeOf } from './challenge.js';
import { type FixedEndpoints, fixedAuth } from './fixed-oauth.js';
import { hashOf } from './hash.js';
import { oauthFetch } from './oauth-fetch.js';
import { type Freshness, Refresher } from './refresher.js';
import { revokeTokens } from './revoke.js';
import type { SecretBox } from './secret-box.js';
import { type ProviderRole, StoredOAuthProvider, tokensContext, verifierContext } from './stored-provider.js';

/**
 * People's connections to OAuth-protected servers: Connect links, the callback, refreshes (one per owner and
 * server at a time, across processes), revocation, and the turns parked until someone connects. The OAuth
 * protocol itself is the MCP SDK's `auth()`; this keeps its state sealed in Postgres, and sends its requests
 * through `oauthFetch` (deadlines, size caps, no internal addresses).
 */

export interface OAuthServer {
  name: string;
  url: string;
  oauth: McpOAuthSettings;
  /** Known endpoints instead of discovery (a platform's own OAuth, not an MCP server's): `fixed-oauth.ts`. */
  fixed?: FixedEndpoints;
}

export interface ConnectionBookOptions {
  /** Where people's browsers reach Butler: links and the OAuth redirect URI are under it. */
  publicUrl: string;
  /** How long a Connect link works (and its sign-in may take). */
  linkTtlMs: number;
  /**
   * Deadlines of OAuth work: one request; everything a Connect page or the callback does before it answers;
   * a refresh, waiting for another process's included.
   */
  deadlines: { requestMs: number; pageMs: number; refreshMs: number };
  /** The most of one OAuth answer Butler reads. */
  maxResponseBytes: number;
  /** Resolves host names for OAuth requests: `dns.lookup` unless given. */
  lookup?: LookupFunction;
}

/** Whether a call can run on its connection now, and if not, whether a person can fix that by connecting. */
export type Readiness =
  | { status: 'ready' }
  | { status: 'refused'; reason: string }
  | { status: 'missing'; server: string; owner: ConnectionOwner };

/** A callback's outcome; `other_browser`: it came back to a browser that did not open the link. */
export type Connected =
  | { ok: true; server: string; owner: ConnectionOwner }
  | { ok: false; refusal: 'other_browser' | 'not_completed'; reason: string };

/** A link that was opened: where the browser goes, and the secret only that browser keeps (a cookie). */
export type OpenedLink =
  | { ok: true; url: URL; flowId: string; browserSecret: string; expiresAt: Date }
  | { ok: false; reason: string };

/** Paths Butler serves for people's browsers, under the public URL. */
export const connectPath = '/connect/';
export const callbackPath = '/oauth/callback';

const linkPurpose = 'connect-link';

export class ConnectionBook {
  private readonly servers: ReadonlyMap<string, OAuthServer>;
  private readonly refresher: Refresher;
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
    this.refresher = new Refresher(
      store.connections,
      async (server, owner, signal) => {
        const provider = this.provider(server, owner, { kind: 'refresh' });
        // The SDK answers a refresh whose request failed by starting over: say what failed instead.
        let failure: unknown;
        const fetch = this.fetchFor(server, signal);
        const fetchFn: FetchLike = (url, init) =>
          fetch(url, init).catch((error: unknown) => {
            failure = error;
            throw error;
          });
        const result = await this.authorize(server, provider, { fetchFn });
        if (result !== 'AUTHORIZED' && failure) throw failure;
        return result === 'AUTHORIZED';
      },
      options.deadlines.refreshMs,
      logger,
    );
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
    let fresh: Freshness;
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

  /** Refreshed ahead of expiry, once across processes; `missing` when there is none or the refresh was refused. */
  ensureFresh(server: string, ownerKey: string): Promise<Freshness> {
    return this.refresher.ensureFresh(server, ownerKey);
  }

  /** After the server refused a token of `version`: refresh it, unless someone already did. */
  refreshAfterRejection(server: string, ownerKey: string, version: number): Promise<Freshness> {
    return this.refresher.afterRejection(server, ownerKey, version);
  }

  /** The stored access token of an owner as it is (no refresh), and its version; undefined when there is none. */
  async accessToken(
    server: string,
    ownerKey: string,
  ): Promise<{ token: string; version: number } | undefined> {
    const record = await this.store.connections.get(server, ownerKey);
    if (!record) return undefined;
    const tokens = JSON.parse(this.box.open(record.tokens, tokensContext(server, ownerKey))) as {
      access_token: string;
    };
    return { token: tokens.access_token, version: record.version };
  }

  /** The access token of `as`'s connection (refreshed when due), for HTTP tools; undefined when there is none. */
  async token(server: string, as: Person): Promise<{ token: string; version: number } | undefined> {
    const owner = this.ownerFor(server, as);
    if ((await this.ensureFresh(server, owner.key)) === 'missing') return undefined;
    return this.accessToken(server, owner.key);
  }

  /** The server refused `as`'s token of `version`: true once it is refreshed (here or elsewhere). */
  async rejected(server: string, as: Person, version: number): Promise<boolean> {
    return (await this.refreshAfterRejection(server, this.ownerFor(server, as).key, version)) === 'ready';
  }

  /**
   * A new single-use Connect link for `owner`. Its secret is derived from the flow's id with the secret key,
   * so it is never stored (only its hash is) and can be shown again while it is unused (`liveLink`).
   */
  async offerLink(
    server: string,
    owner: ConnectionOwner,
    scope?: string,
  ): Promise<{ id: string; url: string; expiresAt: Date }> {
    const id = randomUUID();
    const expiresAt = new Date(Date.now() + this.options.linkTtlMs);
    const token = this.box.mac(linkPurpose, id);
    await this.store.connections.createFlow({
      id,
      server,
      ownerKey: owner.key,
      owner: owner.person,
      linkHash: hashOf(token),
      expiresAt,
      ...(scope ? { scope } : {}),
    });
    return { id, url: this.linkUrl(token), expiresAt };
  }

  /** The URL of link `id` while it can still be used; undefined once used, expired or sealed by a rotated key. */
  async liveLink(id: string): Promise<string | undefined> {
    const flow = await this.store.connections.findFlowById(id);
    if (!flow || flow.openedAt || flow.expiresAt.getTime() <= Date.now()) return undefined;
    const token = this.box.mac(linkPurpose, flow.id);
    return hashOf(token) === flow.linkHash ? this.linkUrl(token) : undefined;
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

  /**
   * A link was used: the authorization URL to send the browser to, once per link, and a secret for that browser
   * alone: the callback completes the flow only in the browser that shows it back. Discovery starts from the
   * server's own 401 (its `WWW-Authenticate` names the protected resource metadata and the scope), as the spec
   * says; the well-known URLs are the fallback. The scope asked for is the flow's (a step-up), else the 401's,
   * else the configured one, else what the metadata supports.
   */
  async openLink(token: string): Promise<OpenedLink> {
    const browserSecret = randomBytes(32).toString('base64url');
    const flow = await this.store.connections.openFlow(hashOf(token), new Date(), hashOf(browserSecret));
    if (!flow)
      return { ok: false, reason: 'This link was used already or has expired. Ask Butler for a new one.' };
    const server = this.servers.get(flow.server);
    if (!server) return { ok: false, reason: `${flow.server} is no longer configured.` };
    const provider = this.provider(
      flow.server,
      { key: flow.ownerKey, person: flow.owner },
      { kind: 'link', flowId: flow.id },
    );
    const fetchFn = this.fetchFor(flow.server, AbortSignal.timeout(this.options.deadlines.pageMs));
    const challenge = server.fixed ? {} : await challengeOf(server.url, fetchFn);
    const scope = flow.scope ?? challenge.scope ?? server.oauth.scopes?.join(' ');
    await this.authorize(flow.server, provider, {
      fetchFn,
      ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
      ...(scope ? { scope } : {}),
    });
    if (!provider.authorizationUrl) throw new Error(`${flow.server} gave no authorization URL`);
    return {
      ok: true,
      url: provider.authorizationUrl,
      flowId: flow.id,
      browserSecret,
      expiresAt: flow.expiresAt,
    };
  }

  /**
   * The authorization server sent the browser back. The `state` finds the flow, which completes once, and only
   * in the browser that opened the link (`browserSecret` reads its cookie for a flow): a flow finished in anyone
   * else's browser is refused before the code is exchanged. A replayed, forged or late callback changes
   * nothing. The turns waiting for this connection go on.
   */
  async complete(input: {
    state?: string;
    code?: string;
    error?: string;
    /** The issuer the authorization response names (RFC 9207), checked against the server's metadata. */
    iss?: string;
    browserSecret: (flowId: string) => string | undefined;
  }): Promise<Connected> {
    const refuse = (reason: string): Connected => ({ ok: false, refusal: 'not_completed', reason });
    if (!input.state) return refuse('The callback has no state.');
    const flow = await this.store.connections.completeFlow(hashOf(input.state), new Date());
    if (!flow?.verifier) return refuse('This sign-in was completed already, or has expired.');
    const presented = input.browserSecret(flow.id);
    if (!flow.browserHash || !presented || !sameHash(hashOf(presented), flow.browserHash)) {
      this.logger.warn(
        { server: flow.server, owner: flow.ownerKey },
        'a sign-in came back to a browser that did not open its Connect link: refused, nothing exchanged',
      );
      return {
        ok: false,
        refusal: 'other_browser',
        reason:
          'This sign-in did not start in this browser, so nothing was connected. If you asked Butler to connect an account, ask it for a new link and open that link in this browser.',
      };
    }
    if (input.error || !input.code)
      return refuse(`The sign-in was not completed (${input.error ?? 'no code'}).`);
    const server = this.servers.get(flow.server);
    if (!server) return refuse(`${flow.server} is no longer configured.`);
    const owner = { key: flow.ownerKey, person: flow.owner };
    const verifier = this.box.open(flow.verifier, verifierContext(flow.id));
    const scope = flow.scope ?? null;
    const provider = this.provider(flow.server, owner, {
      kind: 'callback',
      flowId: flow.id,
      verifier,
      scope,
    });
    const fetchFn = this.fetchFor(flow.server, AbortSignal.timeout(this.options.deadlines.pageMs));
    await this.authorize(flow.server, provider, {
      authorizationCode: input.code,
      ...(input.iss ? { iss: input.iss } : {}),
      fetchFn,
      ...(scope ? { scope } : {}),
    });
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
        this.fetchFor(server, AbortSignal.timeout(this.options.deadlines.pageMs)),
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

  /** The scopes configured for `server`, space-separated (what a step-up asks for again). */
  scopeOf(server: string): string | undefined {
    return this.servers.get(server)?.oauth.scopes?.join(' ');
  }

  /** One step of OAuth for `server`: the MCP SDK's `auth()`, or `fixedAuth` where the endpoints are known. */
  private authorize(
    server: string,
    provider: StoredOAuthProvider,
    options: {
      fetchFn: FetchLike;
      authorizationCode?: string;
      iss?: string;
      scope?: string;
      resourceMetadataUrl?: URL;
    },
  ): Promise<'AUTHORIZED' | 'REDIRECT'> {
    const found = this.servers.get(server);
    if (!found) throw new Error(`no OAuth server is named ${server}`);
    if (found.fixed) return fixedAuth(provider, found.fixed, found.oauth, options);
    return auth(provider, { serverUrl: found.url, ...options });
  }

  serverUrl(server: string): string {
    const found = this.servers.get(server);
    if (!found) throw new Error(`no OAuth server is named ${server}`);
    return found.url;
  }

  private linkUrl(token: string): string {
    return `${this.options.publicUrl}${connectPath}${token}`;
  }

  /** The fetch of OAuth requests for `server`'s authorization, every request ending by `signal` at the latest. */
  private fetchFor(server: string, signal: AbortSignal): FetchLike {
    const { deadlines, maxResponseBytes, lookup } = this.options;
    return oauthFetch(
      {
        serverUrl: this.serverUrl(server),
        requestDeadlineMs: deadlines.requestMs,
        maxResponseBytes,
        ...(lookup ? { lookup } : {}),
      },
      signal,
    );
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

/** Two hex SHA-256 digests compared in constant time. */
const sameHash = (left: string, right: string) =>
  left.length === right.length && timingSafeEqual(Buffer.from(left), Buffer.from(right));

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
