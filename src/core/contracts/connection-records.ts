import type { ChatUser, Person, Platform } from './events.js';
import type { ResumeState } from './repositories.js';

/**
 * What the connections room records (`core/connections`): people's OAuth connections to remote MCP servers,
 * what Butler learned of each server, single-use Connect links, and turns parked until someone connects.
 * Secret values arrive here sealed (`Sealed`): the storage never sees a token in the clear.
 */

/** A sealed secret and the id of the key that sealed it. */
export interface SealedValue {
  keyId: string;
  value: string;
}

/** `shared`: the one connection an admin made for everyone. */
export const sharedOwner = 'shared';

/** Whose connection: a person's key (`person:<name>`, `<platform>:<id>`) or `shared`, and who that is. */
export interface ConnectionOwner {
  key: string;
  /** Who the owner is, as the identity that asked (the shared owner: the admin who connects it). */
  person: Person;
}

export interface ConnectionRecord {
  server: string;
  ownerKey: string;
  /** The identity that connected it. */
  owner: Person;
  tokens: SealedValue;
  expiresAt: Date | null;
  scope: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewConnectFlow {
  /** Chosen by the caller: the link's secret is derived from it. */
  id: string;
  server: string;
  ownerKey: string;
  owner: Person;
  linkHash: string;
  expiresAt: Date;
  /** The scopes to ask for, when the server asked for more than the connection held (a step-up). */
  scope?: string | null;
}

export interface ConnectFlowRecord extends NewConnectFlow {
  verifier: SealedValue | null;
  /** SHA-256 of the secret the browser that opened the link holds (a cookie); the callback must show it. */
  browserHash: string | null;
  openedAt: Date | null;
  completedAt: Date | null;
}

export interface NewConnectionWait {
  server: string;
  ownerKey: string;
  owner: Person;
  conversationKey: string;
  platform: Platform;
  requestedBy: ChatUser;
  requesters: ChatUser[];
  callIds: string[];
  resume: ResumeState;
  expiresAt: Date;
}

export interface ConnectionWaitRecord extends NewConnectionWait {
  id: string;
  status: 'waiting' | 'connected' | 'expired';
  createdAt: Date;
}

export interface ConnectionRepository {
  get(server: string, ownerKey: string): Promise<ConnectionRecord | undefined>;
  /** Connections of these owners (all of them when absent), newest first. */
  list(ownerKeys?: readonly string[]): Promise<ConnectionRecord[]>;
  /** Stores new tokens (a first connection, a reconnection, a refresh), bumping the version. */
  save(input: {
    server: string;
    ownerKey: string;
    owner: Person;
    tokens: SealedValue;
    expiresAt: Date | null;
    scope: string | null;
  }): Promise<ConnectionRecord>;
  /** Deletes the tokens; false when there were none. */
  delete(server: string, ownerKey: string): Promise<boolean>;
  /**
   * Takes the refresh lease of a connection until `until` when nobody holds it: one refresh per owner and
   * server at a time, across processes. False when another holds it, or there is no such connection.
   */
  takeRefreshLease(server: string, ownerKey: string, until: Date): Promise<boolean>;
  releaseRefreshLease(server: string, ownerKey: string): Promise<void>;

  /** The registered client and discovery of a server (shared by everyone who connects it). */
  serverState(server: string): Promise<{ client: SealedValue | null; discovery: unknown } | undefined>;
  saveClient(server: string, client: SealedValue | null): Promise<void>;
  saveDiscovery(server: string, discovery: unknown): Promise<void>;
  /** The tool list the first connection saw; undefined before anyone connected. */
  toolList(server: string): Promise<unknown[] | undefined>;
  saveToolList(server: string, tools: unknown[]): Promise<void>;

  createFlow(flow: NewConnectFlow): Promise<ConnectFlowRecord>;
  /** The flow of a link, whatever its state (a confirmation page reads it without using the link). */
  findFlow(linkHash: string): Promise<ConnectFlowRecord | undefined>;
  findFlowById(id: string): Promise<ConnectFlowRecord | undefined>;
  /**
   * Opens the link once, in the browser whose secret hashes to `browserHash`: marks it opened when unexpired and
   * never opened; undefined otherwise.
   */
  openFlow(linkHash: string, now: Date, browserHash: string): Promise<ConnectFlowRecord | undefined>;
  /** Records the `state` hash, sealed PKCE verifier and scope of the authorization request an opened link made. */
  startAuthorization(
    id: string,
    request: { stateHash: string; verifier: SealedValue; scope: string | null },
  ): Promise<void>;
  /** Completes the flow once: marks it completed when opened, unexpired and never completed. */
  completeFlow(stateHash: string, now: Date): Promise<ConnectFlowRecord | undefined>;

  createWait(wait: NewConnectionWait): Promise<ConnectionWaitRecord>;
  getWait(id: string): Promise<ConnectionWaitRecord | undefined>;
  /** Marks the waits for this owner and server connected, once, and returns them. */
  connectWaits(server: string, ownerKey: string): Promise<ConnectionWaitRecord[]>;
  /** Marks waits past their deadline expired and returns them. */
  expireWaits(now: Date): Promise<ConnectionWaitRecord[]>;
  /** Waits still open, of these owners (all when absent). */
  openWaits(ownerKeys?: readonly string[]): Promise<ConnectionWaitRecord[]>;
}
