import { createHash, randomUUID } from 'node:crypto';
import { type FakeFeishuApi, fakeTenantToken, type Json, type RecordedCall } from './fake-feishu-api.js';

/**
 * The fake Feishu Open API's user side, written from open.feishu.cn: the OAuth authorize page
 * (`GET /open-apis/authen/v1/authorize`, answered as the signed-in browser would, with a 302 to `redirect_uri`),
 * the v2 token endpoint (`POST /open-apis/authen/v2/oauth/token`: authorization_code with PKCE S256 and
 * refresh_token with rotation; flat answers, no `data`; a refresh token only when the scope has
 * `offline_access`), message search with a user token (`POST /open-apis/search/v2/message`, scope
 * `search:message`), reading a message with that token (`GET /open-apis/im/v1/messages/:message_id`) and chat
 * info with the tenant token (`GET /open-apis/im/v1/chats/:chat_id`). Attached to a `FakeFeishuApi` through its
 * `extraRoutes`; calls it does not own fall through to that fake. Codes marked "the fake's" are guesses.
 */

type Answer = { status: number; body: Json };

/** HTTP 401 for a user access token that was revoked by `revokeAccessTokens` (Feishu: "token expired"). */
export const userTokenExpiredCode = 99991677;
/** HTTP 400 for a search without a live user access token (a tenant token, or none). */
export const invalidAccessTokenCode = 99991663;
/** HTTP 400 for a user token whose grant lacks the API's scope (here: `search:message`). */
export const userScopeMissingCode = 99991679;
/** Token endpoint: malformed request (not JSON, missing fields, unknown grant_type). HTTP 400. */
export const invalidRequestCode = 20001;
/** Token endpoint and authorize page: wrong client_id / client_secret (the fake's). HTTP 400. */
export const invalidClientCode = 20002;
/** Token endpoint: unknown, used or mismatched authorization code (redirect_uri, PKCE). HTTP 400. */
export const invalidCodeCode = 20024;
/** Token endpoint: unknown, rotated or refused refresh token. HTTP 400. */
export const refreshRevokedCode = 20064;
/** Field validation failed (page_size, page_token, user_id_type, query). HTTP 400. */
export const fieldValidationCode = 99992402;
/** Reading a message in a chat the token's person is not in. HTTP 400. */
export const messageNoPermissionCode = 230027;
/** Reading a message id the fake does not know. HTTP 400. */
export const messageNotFoundCode = 230011;
/** Chat info for a chat the bot is not in. HTTP 400. */
export const botNotInChatCode = 232011;
/** Chat info for a chat id the fake does not know (the fake's). HTTP 400. */
export const chatNotFoundCode = 232006;

export const fakeTenantKey = 'tenant_fake';

export interface FakeSearchChat {
  chatId: string;
  name: string;
  kind: 'public' | 'private' | 'p2p';
  /** open_ids of the people in the chat. */
  members: string[];
  external?: boolean;
  /** Whether the bot is in the chat (chat info answers 232011 otherwise); default true. */
  botMember?: boolean;
  /** A topic group: chat_mode `topic` instead of `group`. */
  topic?: boolean;
}

export interface FakeSearchMessage {
  messageId?: string;
  chatId: string;
  /** The sender's open_id, or the app id when `senderType` is `app`. */
  sender: string;
  text: string;
  createTime?: Date;
  senderType?: 'user' | 'app';
  /** A reply: the message it answers (root_id follows that message's root). */
  parentId?: string;
  /** open_ids the message @-mentions (search's `at_chatter_ids`). */
  mentions?: string[];
}

interface StoredMessage extends Required<Omit<FakeSearchMessage, 'parentId' | 'createTime'>> {
  messageId: string;
  createTime: number;
  parentId: string | undefined;
  rootId: string | undefined;
  order: number;
}

interface Grant {
  openId: string;
  scope: string;
  revoked: boolean;
}

export class FakeFeishuSearch {
  readonly authorizeRequests: Record<string, string>[] = [];
  readonly tokenRequests: Json[] = [];
  readonly searchRequests: Array<{ body: Json; query: Record<string, string>; token: string }> = [];
  readonly messageReads: Array<{ messageId: string; token: string }> = [];
  readonly chatReads: Array<{ chatId: string; authorization: string | undefined }> = [];
  readonly chats = new Map<string, FakeSearchChat>();
  readonly messages = new Map<string, StoredMessage>();
  /** Issued user access tokens and refresh tokens → whose they are. */
  readonly accessTokens = new Map<string, Grant>();
  readonly refreshTokens = new Map<string, Grant>();
  private readonly codes = new Map<
    string,
    { openId: string; redirectUri: string; codeChallenge: string | undefined; scope: string }
  >();
  private readonly pageTokens = new Map<string, number>();
  private signedIn: string | undefined;
  private counter = 0;

  private constructor(
    private readonly api: FakeFeishuApi,
    private readonly options: { appId: string; appSecret: string },
  ) {}

  static attach(api: FakeFeishuApi, options: { appId: string; appSecret: string }): FakeFeishuSearch {
    const search = new FakeFeishuSearch(api, options);
    api.extraRoutes.push((call) => search.route(call));
    return search;
  }

  /** The person the authorize page signs in as; undefined → the person declines (`error=access_denied`). */
  signedInAs(openId: string | undefined): void {
    this.signedIn = openId;
  }

  /** The person's user access tokens answer HTTP 401 (code 99991677) from now on; refresh still works. */
  revokeAccessTokens(openId: string): void {
    for (const grant of this.accessTokens.values()) if (grant.openId === openId) grant.revoked = true;
  }

  /** The person's current refresh tokens answer invalid_grant (code 20064); a new sign-in issues working ones. */
  refuseRefresh(openId: string): void {
    for (const grant of this.refreshTokens.values()) if (grant.openId === openId) grant.revoked = true;
  }

  addChat(chat: FakeSearchChat): void {
    this.chats.set(chat.chatId, { ...chat, members: [...chat.members] });
  }

  /** Adds a message people wrote; returns its id. */
  addMessage(message: FakeSearchMessage): string {
    const messageId = message.messageId ?? this.next('om_search_');
    const parent = message.parentId ? this.messages.get(message.parentId) : undefined;
    this.messages.set(messageId, {
      messageId,
      chatId: message.chatId,
      sender: message.sender,
      text: message.text,
      createTime: (message.createTime ?? new Date()).getTime(),
      senderType: message.senderType ?? 'user',
      mentions: message.mentions ?? [],
      parentId: message.parentId,
      rootId: message.parentId ? (parent?.rootId ?? message.parentId) : undefined,
      order: this.messages.size,
    });
    return messageId;
  }

  private route(call: RecordedCall): Answer | undefined {
    const { method, path } = call;
    if (method === 'GET' && path === '/open-apis/authen/v1/authorize') return this.authorize(call.query);
    if (method === 'POST' && path === '/open-apis/authen/v2/oauth/token') return this.token(call);
    if (method === 'POST' && path === '/open-apis/search/v2/message') return this.search(call);
    let match = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) return this.readMessage(call, decodeURIComponent(match[1] as string));
    match = /^\/open-apis\/im\/v1\/chats\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) return this.readChat(call, decodeURIComponent(match[1] as string));
    return undefined;
  }

  private authorize(query: Record<string, string>): Answer {
    this.authorizeRequests.push({ ...query });
    const { client_id, redirect_uri, scope, state, code_challenge, code_challenge_method } = query;
    if (client_id !== this.options.appId) return error(invalidClientCode, 'client_id is invalid');
    if (!redirect_uri || !URL.canParse(redirect_uri) || query.response_type !== 'code')
      return error(invalidRequestCode, 'redirect_uri or response_type is invalid');
    if (code_challenge && code_challenge_method !== 'S256')
      return error(invalidRequestCode, 'code_challenge_method must be S256');
    const location = new URL(redirect_uri);
    if (this.signedIn) {
      const code = this.next('code-');
      this.codes.set(code, {
        openId: this.signedIn,
        redirectUri: redirect_uri,
        codeChallenge: code_challenge,
        scope: scope ?? '',
      });
      location.searchParams.set('code', code);
    } else {
      location.searchParams.set('error', 'access_denied');
    }
    if (state !== undefined) location.searchParams.set('state', state);
    // fake-feishu-api.ts sends `location` as the Location header of a 302.
    return { status: 302, body: { location: location.toString() } };
  }

  private token(call: RecordedCall): Answer {
    const body = call.body ?? {};
    this.tokenRequests.push({ ...body });
    const oauthError = (code: number, kind: string, description: string): Answer => ({
      status: 400,
      body: { code, error: kind, error_description: description },
    });
    if (!call.contentType?.toLowerCase().startsWith('application/json') || !call.body)
      return oauthError(invalidRequestCode, 'invalid_request', 'the body must be JSON');
    if (body.client_id !== this.options.appId || body.client_secret !== this.options.appSecret)
      return oauthError(invalidClientCode, 'invalid_client', 'client_id or client_secret is invalid');
    if (body.grant_type === 'authorization_code') {
      const issued = this.codes.get(String(body.code));
      this.codes.delete(String(body.code));
      if (!issued) return oauthError(invalidCodeCode, 'invalid_grant', 'code is invalid');
      if (body.redirect_uri !== issued.redirectUri)
        return oauthError(invalidCodeCode, 'invalid_grant', 'redirect_uri does not match');
      const verifier = typeof body.code_verifier === 'string' ? body.code_verifier : '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (issued.codeChallenge !== undefined && challenge !== issued.codeChallenge)
        return oauthError(invalidCodeCode, 'invalid_grant', 'code_verifier is invalid');
      return this.issue(issued.openId, issued.scope);
    }
    if (body.grant_type === 'refresh_token') {
      const grant = this.refreshTokens.get(String(body.refresh_token));
      if (!grant || grant.revoked)
        return oauthError(refreshRevokedCode, 'invalid_grant', 'refresh token revoked');
      grant.revoked = true;
      return this.issue(grant.openId, grant.scope);
    }
    return oauthError(invalidRequestCode, 'unsupported_grant_type', 'grant_type is invalid');
  }

  private issue(openId: string, scope: string): Answer {
    const accessToken = this.next('u-');
    this.accessTokens.set(accessToken, { openId, scope, revoked: false });
    const answer: Json = { code: 0, access_token: accessToken, expires_in: 7200 };
    if (scope.split(/\s+/).includes('offline_access')) {
      const refreshToken = this.next('ur-');
      this.refreshTokens.set(refreshToken, { openId, scope, revoked: false });
      Object.assign(answer, { refresh_token: refreshToken, refresh_token_expires_in: 604800 });
    }
    return { status: 200, body: { ...answer, scope, token_type: 'Bearer' } };
  }

  /** The user token a call carries, if the fake issued it; `failed` when it no longer works. */
  private userOf(call: RecordedCall): { token: string; grant: Grant; failed?: Answer } | undefined {
    const token = call.authorization?.replace(/^Bearer /, '') ?? '';
    const grant = this.accessTokens.get(token);
    if (!grant) return undefined;
    const failed = grant.revoked
      ? error(userTokenExpiredCode, 'Authentication token expired', 401)
      : undefined;
    return { token, grant, ...(failed ? { failed } : {}) };
  }

  private search(call: RecordedCall): Answer {
    const user = this.userOf(call);
    const body = call.body ?? {};
    const token = call.authorization?.replace(/^Bearer /, '') ?? '';
    this.searchRequests.push({ body, query: { ...call.query }, token });
    if (!user) return error(invalidAccessTokenCode, 'Invalid access token for authorization');
    if (user.failed) return user.failed;
    if (!user.grant.scope.split(/\s+/).includes('search:message'))
      return error(userScopeMissingCode, 'Unauthorized. Required scope: [search:message]');
    const { page_size, page_token, user_id_type } = call.query;
    const size = page_size === undefined ? 20 : Number(page_size);
    if (!Number.isInteger(size) || size < 1 || size > 100)
      return error(fieldValidationCode, 'field validation failed: page_size');
    if (user_id_type !== undefined && user_id_type !== 'open_id')
      return error(fieldValidationCode, 'field validation failed: user_id_type (the fake has open_id only)');
    const offset = page_token ? this.pageTokens.get(page_token) : 0;
    if (offset === undefined) return error(fieldValidationCode, 'field validation failed: page_token');
    if (typeof body.query !== 'string') return error(fieldValidationCode, 'field validation failed: query');
    const hits = [...this.messages.values()]
      .filter((message) => this.matches(message, body, user.grant.openId))
      .sort((a, b) => b.createTime - a.createTime || b.order - a.order);
    const items = hits.slice(offset, offset + size).map((message) => message.messageId);
    const hasMore = offset + size < hits.length;
    const next = hasMore ? this.next('pt_') : '';
    if (hasMore) this.pageTokens.set(next, offset + size);
    return ok({ items, page_token: next, has_more: hasMore });
  }

  private matches(message: StoredMessage, body: Json, openId: string): boolean {
    const chat = this.chats.get(message.chatId);
    if (!chat?.members.includes(openId)) return false;
    const list = (value: unknown) =>
      Array.isArray(value) && value.length > 0 ? value.map(String) : undefined;
    const words = String(body.query).toLowerCase().split(/\s+/).filter(Boolean);
    const text = message.text.toLowerCase();
    if (!words.every((word) => text.includes(word))) return false;
    if (list(body.from_ids) && !list(body.from_ids)?.includes(message.sender)) return false;
    if (list(body.chat_ids) && !list(body.chat_ids)?.includes(message.chatId)) return false;
    const mentioned = list(body.at_chatter_ids);
    if (mentioned && !mentioned.some((id) => message.mentions.includes(id))) return false;
    // Every message here is text; search's message_type filters files, images and media.
    if (body.message_type !== undefined && body.message_type !== 'text') return false;
    if (body.from_type === 'bot' && message.senderType !== 'app') return false;
    if (body.from_type === 'user' && message.senderType !== 'user') return false;
    if (body.chat_type === 'p2p_chat' && chat.kind !== 'p2p') return false;
    if (body.chat_type === 'group_chat' && chat.kind === 'p2p') return false;
    if (body.start_time !== undefined && message.createTime < Number(body.start_time) * 1000) return false;
    if (body.end_time !== undefined && message.createTime > Number(body.end_time) * 1000) return false;
    return true;
  }

  private readMessage(call: RecordedCall, messageId: string): Answer | undefined {
    const user = this.userOf(call);
    if (!user) return undefined;
    this.messageReads.push({ messageId, token: user.token });
    if (user.failed) return user.failed;
    const message = this.messages.get(messageId);
    if (!message) return error(messageNotFoundCode, 'message not found');
    if (!this.chats.get(message.chatId)?.members.includes(user.grant.openId))
      return error(messageNoPermissionCode, 'no permission to read the message');
    const time = String(message.createTime);
    const sender =
      message.senderType === 'app'
        ? { id: message.sender, id_type: 'app_id', sender_type: 'app', tenant_key: fakeTenantKey }
        : { id: message.sender, id_type: 'open_id', sender_type: 'user', tenant_key: fakeTenantKey };
    const item: Json = {
      message_id: message.messageId,
      ...(message.rootId ? { root_id: message.rootId, parent_id: message.parentId } : {}),
      msg_type: 'text',
      create_time: time,
      update_time: time,
      deleted: false,
      updated: false,
      chat_id: message.chatId,
      sender,
      body: { content: JSON.stringify({ text: message.text }) },
      mentions: message.mentions.map((id, index) => ({
        key: `@_user_${index + 1}`,
        id,
        id_type: 'open_id',
        name: id,
        tenant_key: fakeTenantKey,
      })),
    };
    return ok({ items: [item] });
  }

  private readChat(call: RecordedCall, chatId: string): Answer | undefined {
    if (call.authorization !== `Bearer ${fakeTenantToken}` && !this.api.auth.ownerOf(call)) return undefined;
    this.chatReads.push({ chatId, authorization: call.authorization });
    const chat = this.chats.get(chatId);
    if (!chat) return error(chatNotFoundCode, 'invalid chat_id');
    if (chat.botMember === false) return error(botNotInChatCode, 'operator not in chat');
    return ok({
      name: chat.name,
      chat_mode: chat.kind === 'p2p' ? 'p2p' : chat.topic ? 'topic' : 'group',
      chat_type: chat.kind === 'public' ? 'public' : 'private',
      external: chat.external ?? false,
      tenant_key: fakeTenantKey,
      owner_id: chat.members[0] ?? '',
      owner_id_type: 'open_id',
    });
  }

  private next(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter.toString(16).padStart(6, '0')}${randomUUID().slice(0, 8)}`;
  }
}

function ok(data: Json): Answer {
  return { status: 200, body: { code: 0, msg: 'success', data } };
}

function error(code: number, msg: string, status = 400): Answer {
  return { status, body: { code, msg } };
}
