import * as lark from '@larksuiteoapi/node-sdk';
import type { FeishuConfig } from '../../config/index.js';
import { ButlerError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import {
  type CallObserver,
  type LaneSpec,
  Pacer,
  type RateLimit,
  type RetryPolicy,
} from '../pacing/index.js';
import type { FeishuBotIdentity } from './bot-identity.js';
import { asRecord, type JsonRecord, recordField, recordsField, stringField } from './fields.js';
import { createLarkLogger, larkLoggerLevel } from './lark-logger.js';

/**
 * The one file that talks to Feishu: the Lark SDK Client (and WSClient) wired to the configured domain, with
 * responses checked (`code === 0`) and errors turned into FeishuApiError. Everything else sees `FeishuApi`.
 */

/** Feishu's documented throttling answers: HTTP 429, app rate limit 99991400, message rate limit 230020. */
const rateLimitCodes = new Set([99991400, 230020]);

/**
 * "Access denied. One of the following scopes is required: […]": the app lacks the scope the call needs
 * (open.feishu.cn trouble-shooting "how-to-fix-the-99991672-error"; answered with HTTP 400).
 */
export const scopeMissingCode = 99991672;

export class FeishuApiError extends ButlerError {
  readonly feishuCode: number | undefined;
  readonly httpStatus: number | undefined;

  constructor(
    operation: string,
    feishuCode: number | undefined,
    httpStatus: number | undefined,
    detail: string,
  ) {
    super(
      'feishu_api_error',
      `Feishu ${operation} failed (${[httpStatus && `HTTP ${httpStatus}`, feishuCode !== undefined && `code ${feishuCode}`].filter(Boolean).join(', ') || detail})`,
    );
    this.feishuCode = feishuCode;
    this.httpStatus = httpStatus;
  }

  get rateLimited(): boolean {
    return this.httpStatus === 429 || (this.feishuCode !== undefined && rateLimitCodes.has(this.feishuCode));
  }

  get scopeMissing(): boolean {
    return this.feishuCode === scopeMissingCode;
  }
}

/**
 * Feishu's documented limits, paced in the one pacing layer (platforms.md §13 and "Checked since"): each CardKit
 * endpoint 1000/min and 50/s per app, 10 operations/s per card; a message patch 5 QPS per message; sends and
 * replies 5 QPS per chat, shared by every bot in it.
 */
const perSecond = (limit: number): RateLimit => ({ limit, windowMs: 1000 });
const cardKitEndpoint: readonly RateLimit[] = [perSecond(50), { limit: 1000, windowMs: 60_000 }];
const cardKitLane = (appId: string, endpoint: string): LaneSpec => ({
  key: `feishu:${appId}:${endpoint}`,
  limits: cardKitEndpoint,
});
const perKeyLane = (key: string, limit: number): LaneSpec => ({ key, limits: [perSecond(limit)] });
/** Feishu's throttling answers carry no Retry-After: they surface as before, only the pace changes. */
const noRetries: RetryPolicy = { retries: 0, retryAfterMs: () => undefined, rateLimited: isRateLimited };

export function isRateLimited(error: unknown): boolean {
  return error instanceof FeishuApiError && error.rateLimited;
}

/** Where a message goes: a reply to a message (optionally as a thread reply), or a new message in a chat. */
export interface MessageDestination {
  chatId: string;
  replyTo: string | undefined;
  replyInThread: boolean;
}

export interface OutgoingMessage {
  msgType: 'interactive' | 'text';
  content: JsonRecord;
}

export interface FeishuApi {
  botInfo(): Promise<FeishuBotIdentity>;
  /**
   * A person's display name from the contact API, by open_id; undefined when the answer has none (the app
   * lacks the field scope `contact:user.base:readonly`). Throws FeishuApiError (`scopeMissing` without an API scope).
   */
  userName(openId: string): Promise<string | undefined>;
  /**
   * A message as `GET /open-apis/im/v1/messages/:message_id` lists it (raw items): for a merged forward, the
   * message itself and then every message it holds, each naming its forward in `upper_message_id`.
   */
  messageItems(messageId: string): Promise<JsonRecord[]>;
  /** CardKit: creates a card entity from card JSON 2.0; returns its card_id. */
  createCard(card: JsonRecord): Promise<string>;
  /** CardKit: replaces an element's content; `sequence` must grow per card. */
  updateCardElement(cardId: string, elementId: string, content: string, sequence: number): Promise<void>;
  updateCardSettings(cardId: string, settings: JsonRecord, sequence: number): Promise<void>;
  /** Returns the new message's id. */
  sendMessage(destination: MessageDestination, message: OutgoingMessage): Promise<string>;
  /** Replaces an interactive message's card. */
  patchMessage(messageId: string, card: JsonRecord): Promise<void>;
  /** Returns the reaction id. */
  addReaction(messageId: string, emojiType: string): Promise<string>;
  deleteReaction(messageId: string, reactionId: string): Promise<void>;
}

export interface FeishuApiOptions {
  config: FeishuConfig;
  logger: Logger;
  requestTimeoutMilliseconds?: number;
  /** Hears each call's outcome by operation (metrics). */
  onCall?: CallObserver | undefined;
}

const defaultRequestTimeoutMilliseconds = 15_000;

/** The SDK's axios instance with a timeout: without one a stalled Feishu call would hang a reply forever. */
function httpInstanceWithTimeout(timeout: number): lark.HttpInstance {
  const base = lark.defaultHttpInstance;
  return {
    request: (options) => base.request({ timeout, ...options }),
    get: (url, options) => base.get(url, { timeout, ...options }),
    delete: (url, options) => base.delete(url, { timeout, ...options }),
    head: (url, options) => base.head(url, { timeout, ...options }),
    options: (url, options) => base.options(url, { timeout, ...options }),
    post: (url, data, options) => base.post(url, data, { timeout, ...options }),
    put: (url, data, options) => base.put(url, data, { timeout, ...options }),
    patch: (url, data, options) => base.patch(url, data, { timeout, ...options }),
  } as lark.HttpInstance;
}

async function checkedCall<T>(
  operation: string,
  request: () => Promise<unknown>,
  read: (body: JsonRecord) => T,
): Promise<T> {
  let body: JsonRecord | undefined;
  try {
    body = asRecord(await request());
  } catch (error) {
    const response = recordField(asRecord(error), 'response');
    const data = recordField(response, 'data');
    const status = typeof response?.status === 'number' ? response.status : undefined;
    const code = typeof data?.code === 'number' ? data.code : undefined;
    throw new FeishuApiError(operation, code, status, (error as Error).message ?? 'network error');
  }
  const code = body?.code;
  if (code !== 0) {
    throw new FeishuApiError(
      operation,
      typeof code === 'number' ? code : undefined,
      undefined,
      stringField(body, 'msg') ?? 'unexpected answer',
    );
  }
  return read(body ?? {});
}

function requireString(operation: string, value: string | undefined): string {
  if (!value) throw new FeishuApiError(operation, undefined, undefined, 'answer is missing an id');
  return value;
}

export interface FeishuSdk {
  api: FeishuApi;
  larkLogger: lark.Logger;
  httpInstance: lark.HttpInstance;
}

export function createFeishuApi(options: FeishuApiOptions): FeishuSdk {
  const { config } = options;
  const larkLogger = createLarkLogger(options.logger);
  const httpInstance = httpInstanceWithTimeout(
    options.requestTimeoutMilliseconds ?? defaultRequestTimeoutMilliseconds,
  );
  // Our own token cache: the SDK's default one is shared by every Client in the process.
  const cache = new lark.DefaultCache();
  const clientFor = (logger: lark.Logger) =>
    new lark.Client({
      appId: config.appId,
      appSecret: config.appSecret,
      domain: config.baseUrl,
      logger,
      loggerLevel: larkLoggerLevel,
      httpInstance,
      cache,
    });
  const client = clientFor(larkLogger);
  // Name lookups fail routinely (optional scope not granted, people outside the contact range) and the caller
  // handles that; the SDK would log each one as an error. Same token cache, so no extra token request.
  const contactClient = clientFor(createLarkLogger(options.logger, { quiet: true }));
  const data = (body: JsonRecord) => recordField(body, 'data');
  const pacer = new Pacer({ onCall: options.onCall });
  type Request = () => Promise<unknown>;
  const paced = (lanes: readonly LaneSpec[], request: Request) => ({ lanes, request });
  /** Every call goes through the pacing layer (which counts it); only a `paced` one waits for its lanes. */
  const call = <T>(
    operation: string,
    request: Request | ReturnType<typeof paced>,
    read: (body: JsonRecord) => T,
  ): Promise<T> => {
    const { lanes, request: send } = typeof request === 'function' ? { lanes: [], request } : request;
    return pacer.run(operation, lanes, () => checkedCall(operation, send, read), noRetries);
  };
  const cardLanes = (endpoint: string, cardId: string) => [
    cardKitLane(config.appId, endpoint),
    perKeyLane(`feishu:${config.appId}:card:${cardId}`, 10),
  ];

  const api: FeishuApi = {
    botInfo: () =>
      call(
        'bot info',
        () => client.request({ method: 'GET', url: '/open-apis/bot/v3/info' }),
        (body) => {
          const bot = recordField(body, 'bot') ?? recordField(data(body), 'bot');
          return {
            openId: requireString('bot info', stringField(bot, 'open_id')),
            // Not documented for this endpoint; kept when present so mentions carrying only them still match.
            userId: stringField(bot, 'user_id'),
            unionId: stringField(bot, 'union_id'),
            name: stringField(bot, 'app_name'),
          };
        },
      ),
    // open.feishu.cn im-v1/message/get (scope im:message; the bot must be in the chat). A merge_forward's
    // sub-messages, nested forwards' included, come in the same answer (merge_forward doc).
    messageItems: (messageId) =>
      call(
        'message get',
        () =>
          client.im.v1.message.get({
            path: { message_id: messageId },
            params: { user_id_type: 'open_id' },
          }),
        (body) => recordsField(data(body), 'items'),
      ),
    // GET /open-apis/contact/v3/users/:user_id?user_id_type=open_id → data.user{name, en_name, …}
    // (open.feishu.cn contact-v3/user/get: one of contact:contact.base:readonly, contact:contact:readonly_as_app,
    // … to call it; `name` only with the field scope contact:user.base:readonly).
    userName: (openId) =>
      call(
        'contact user get',
        () =>
          contactClient.contact.v3.user.get({
            path: { user_id: openId },
            params: { user_id_type: 'open_id' },
          }),
        (body) => {
          const user = recordField(data(body), 'user');
          return stringField(user, 'name') ?? stringField(user, 'en_name');
        },
      ),
    createCard: (card) =>
      call(
        'card create',
        paced([cardKitLane(config.appId, 'card.create')], () =>
          client.cardkit.v1.card.create({ data: { type: 'card_json', data: JSON.stringify(card) } }),
        ),
        (body) => requireString('card create', stringField(data(body), 'card_id')),
      ),
    updateCardElement: (cardId, elementId, content, sequence) =>
      call(
        'card element update',
        paced(cardLanes('cardElement.content', cardId), () =>
          client.cardkit.v1.cardElement.content({
            path: { card_id: cardId, element_id: elementId },
            data: { content, sequence, uuid: `c_${cardId}_${sequence}` },
          }),
        ),
        () => undefined,
      ),
    updateCardSettings: (cardId, settings, sequence) =>
      call(
        'card settings',
        paced(cardLanes('card.settings', cardId), () =>
          client.cardkit.v1.card.settings({
            path: { card_id: cardId },
            data: { settings: JSON.stringify(settings), sequence, uuid: `s_${cardId}_${sequence}` },
          }),
        ),
        () => undefined,
      ),
    sendMessage: (destination, message) => {
      const content = JSON.stringify(message.content);
      const readId = (body: JsonRecord) =>
        requireString('message send', stringField(data(body), 'message_id'));
      const chatLane = [perKeyLane(`feishu:${config.appId}:message.send:${destination.chatId}`, 5)];
      if (destination.replyTo) {
        const replyTo = destination.replyTo;
        return call(
          'message reply',
          paced(chatLane, () =>
            client.im.v1.message.reply({
              path: { message_id: replyTo },
              data: { content, msg_type: message.msgType, reply_in_thread: destination.replyInThread },
            }),
          ),
          readId,
        );
      }
      return call(
        'message create',
        paced(chatLane, () =>
          client.im.v1.message.create({
            params: { receive_id_type: 'chat_id' },
            data: { receive_id: destination.chatId, content, msg_type: message.msgType },
          }),
        ),
        readId,
      );
    },
    patchMessage: (messageId, card) =>
      call(
        'message patch',
        paced([perKeyLane(`feishu:${config.appId}:message.patch:${messageId}`, 5)], () =>
          client.im.v1.message.patch({
            path: { message_id: messageId },
            data: { content: JSON.stringify(card) },
          }),
        ),
        () => undefined,
      ),
    addReaction: (messageId, emojiType) =>
      call(
        'reaction create',
        () =>
          client.im.v1.messageReaction.create({
            path: { message_id: messageId },
            data: { reaction_type: { emoji_type: emojiType } },
          }),
        (body) => requireString('reaction create', stringField(data(body), 'reaction_id')),
      ),
    deleteReaction: (messageId, reactionId) =>
      call(
        'reaction delete',
        () =>
          client.im.v1.messageReaction.delete({ path: { message_id: messageId, reaction_id: reactionId } }),
        () => undefined,
      ),
  };
  return { api, larkLogger, httpInstance };
}

export interface LongConnectionCallbacks {
  onReady: () => void;
  onReconnecting: () => void;
  onReconnected: () => void;
  onError: (error: Error) => void;
}

/** The SDK's long-connection client; it reconnects by itself with the server-given interval and jitter. */
export function createWsClient(
  sdk: FeishuSdk,
  config: FeishuConfig,
  callbacks: LongConnectionCallbacks,
): lark.WSClient {
  return new lark.WSClient({
    appId: config.appId,
    appSecret: config.appSecret,
    domain: config.baseUrl,
    logger: sdk.larkLogger,
    loggerLevel: larkLoggerLevel,
    httpInstance: sdk.httpInstance,
    autoReconnect: true,
    handshakeTimeoutMs: 10_000,
    ...callbacks,
  });
}
