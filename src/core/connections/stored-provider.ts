import { randomBytes } from 'node:crypto';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import type { ConnectionRepository } from '../contracts/connection-records.js';
import type { Person } from '../contracts/events.js';
import type { McpOAuthSettings } from '../tools/mcp/mcp-settings.js';
import { hashOf } from './hash.js';
import type { SecretBox } from './secret-box.js';

/**
 * The MCP SDK's `OAuthClientProvider` over Butler's database, for one server and one owner. The SDK's `auth()`
 * does discovery (RFC 9728, then RFC 8414 / OIDC), registration, PKCE, `state` and the `resource` indicator;
 * this class only keeps what it hands over, sealed, and says which part of a flow it serves:
 * - `link`: a Connect link was opened: a new authorization request (never a refresh of old tokens);
 * - `callback`: the authorization server sent the person back: exchange the code with the link's verifier;
 * - `refresh`: the tokens need refreshing, under the owner's refresh lease (and revocation).
 * The MCP transport gets no provider: it sends the stored access token (`bearer-fetch.ts`), and everything else
 * happens here, under the deadlines of `oauthFetch`.
 */

export type ProviderRole =
  | { kind: 'link'; flowId: string }
  /** `scope`: what the authorization request asked for (kept with tokens that do not say what they grant). */
  | { kind: 'callback'; flowId: string; verifier: string; scope: string | null }
  | { kind: 'refresh' };

export interface ProviderDeps {
  repository: ConnectionRepository;
  box: SecretBox;
  server: string;
  oauth: McpOAuthSettings;
  redirectUrl: string;
}

/** Associated data binding a sealed value to where it is stored. */
export const tokensContext = (server: string, ownerKey: string) => `connection\0${server}\0${ownerKey}`;
export const clientContext = (server: string) => `client\0${server}`;
export const verifierContext = (flowId: string) => `flow\0${flowId}`;

/** Thrown where the MCP authorization spec says a client must refuse to go on. */
export class OAuthRefusedError extends Error {
  override name = 'OAuthRefusedError';
}

export class StoredOAuthProvider implements OAuthClientProvider {
  /** The authorization URL `auth()` produced, for a `link` role. */
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl?: string;
  private stateValue: string | undefined;
  private verifierValue: string | undefined;

  constructor(
    private readonly deps: ProviderDeps,
    private readonly owner: { key: string; person: Person },
    private readonly role: ProviderRole,
  ) {
    if (typeof deps.oauth.clientMetadataUrl === 'string')
      this.clientMetadataUrl = deps.oauth.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.deps.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { oauth } = this.deps;
    return {
      client_name: 'Butler',
      redirect_uris: [this.deps.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: oauth.clientSecret ? 'client_secret_basic' : 'none',
      ...(oauth.scopes ? { scope: oauth.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    this.stateValue ??= randomBytes(32).toString('base64url');
    return this.stateValue;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { oauth, repository, box, server } = this.deps;
    if (oauth.clientId)
      return {
        client_id: oauth.clientId,
        ...(oauth.clientSecret ? { client_secret: oauth.clientSecret } : {}),
      };
    const sealed = (await repository.serverState(server))?.client;
    return sealed
      ? (JSON.parse(box.open(sealed, clientContext(server))) as OAuthClientInformationMixed)
      : undefined;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    const { repository, box, server, oauth } = this.deps;
    // A pre-registered client is configuration, not state.
    if (oauth.clientId) return;
    await repository.saveClient(server, box.seal(JSON.stringify(information), clientContext(server)));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    // A Connect link asks anew: never a refresh of what an earlier connection left.
    if (this.role.kind === 'link' || this.role.kind === 'callback') return undefined;
    const { repository, box, server } = this.deps;
    const record = await repository.get(server, this.owner.key);
    if (!record) return undefined;
    return JSON.parse(box.open(record.tokens, tokensContext(server, this.owner.key))) as OAuthTokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    if (this.role.kind === 'link') return;
    const { repository, box, server } = this.deps;
    const previous = this.role.kind === 'refresh' ? await this.tokens() : undefined;
    // The SDK re-saves the tokens it holds (stamped with their issuer) before it refreshes them: the same access
    // token is no news, so neither its expiry nor the version moves (a failed refresh must not look fresh).
    if (
      previous?.access_token === tokens.access_token &&
      previous.refresh_token === tokens.refresh_token &&
      previous.expires_in === tokens.expires_in
    )
      return;
    // A server that does not rotate refresh tokens answers a refresh without one: the old one still works.
    const kept = tokens.refresh_token ?? previous?.refresh_token;
    // A token response need not say its scope: then it is what was asked for (or held before a refresh).
    const held = (await repository.get(server, this.owner.key))?.scope ?? null;
    const scope = tokens.scope ?? (this.role.kind === 'callback' ? this.role.scope : held);
    const whole = kept ? { ...tokens, refresh_token: kept } : tokens;
    await repository.save({
      server,
      ownerKey: this.owner.key,
      owner: this.owner.person,
      tokens: box.seal(JSON.stringify(whole), tokensContext(server, this.owner.key)),
      expiresAt: tokens.expires_in === undefined ? null : new Date(Date.now() + tokens.expires_in * 1000),
      scope,
    });
  }

  /** The authorization request a link made: its state, verifier and scope are kept (sealed, or hashed) for the callback. */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrl = authorizationUrl;
    if (this.role.kind !== 'link' || this.verifierValue === undefined) return;
    const { flowId } = this.role;
    await this.deps.repository.startAuthorization(flowId, {
      stateHash: hashOf(this.state()),
      verifier: this.deps.box.seal(this.verifierValue, verifierContext(flowId)),
      scope: authorizationUrl.searchParams.get('scope'),
    });
  }

  saveCodeVerifier(codeVerifier: string): void {
    if (this.role.kind === 'link') this.verifierValue = codeVerifier;
  }

  codeVerifier(): string {
    if (this.role.kind !== 'callback') throw new OAuthRefusedError('no authorization request is in progress');
    return this.role.verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    // Only a refresh the server refused ends a connection.
    if (this.role.kind !== 'refresh') return;
    const { repository, server } = this.deps;
    if (scope === 'tokens' || scope === 'all') await repository.delete(server, this.owner.key);
    if ((scope === 'client' || scope === 'all') && !this.deps.oauth.clientId)
      await repository.saveClient(server, null);
    if (scope === 'discovery' || scope === 'all') await repository.saveDiscovery(server, null);
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const state = await this.deps.repository.serverState(this.deps.server);
    return (state?.discovery ?? undefined) as OAuthDiscoveryState | undefined;
  }

  /**
   * The spec's PKCE rule: a client must refuse an authorization server that does not say it supports S256
   * (the SDK refuses only one that lists other methods).
   */
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const methods = state.authorizationServerMetadata?.code_challenge_methods_supported;
    if (!methods?.includes('S256'))
      throw new OAuthRefusedError(
        `the authorization server of ${this.deps.server} does not offer PKCE with S256 (code_challenge_methods_supported), so Butler does not connect to it`,
      );
    await this.deps.repository.saveDiscovery(this.deps.server, state);
  }
}
