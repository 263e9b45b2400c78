import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeFeishuAuth } from './fake-feishu-auth.js';
import { buttonValue, type Json, refuseCardkit, refuseMessage } from './fake-feishu-card-rules.js';
import { answerContactUser, type FakeContactUser } from './fake-feishu-contact.js';
import { type FakeAnswer, FakeFeishuFiles, type FakeUpload } from './fake-feishu-files.js';
import { FakeFeishuTopics } from './fake-feishu-topics.js';

/**
 * A local stand-in for the Feishu / Lark Open API, reached through FEISHU_DOMAIN. It records every call and
 * answers like the real one (tenant token, bot info, contact users, messages, reactions, CardKit with strictly
 * increasing `sequence` per card), refuses cards Feishu refuses (request body over 30 KB, more than 5 tables;
 * see `card-rules.ts`), serves message resources and takes uploads (`fake-feishu-files.ts`) and fails on demand. Error codes for CardKit sequence and unknown ids are the fake's own.
 */

export type { Json } from './fake-feishu-card-rules.js';

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: Json | undefined;
  /** Size of the request body as sent (the serialized JSON, escapes included). */
  bytes: number;
  authorization: string | undefined;
  contentType: string | undefined;
  /** Date.now() when the call arrived. */
  at: number;
  /** HTTP status and Feishu code of the answer. */
  status: number;
  code: number;
}

export interface FailureRule {
  method?: string;
  path: string | RegExp;
  /** HTTP status of the failure (default 200 with a Feishu error code). */
  status?: number;
  code?: number;
  msg?: string;
  /** Wait this long before answering (with the failure or, when no status/code is given, normally). */
  delayMs?: number;
  /** How many matching calls fail; default 1. */
  times?: number;
}

export interface FakeMessage {
  messageId: string;
  chatId: string;
  msgType: string;
  content: Json;
  replyTo: string | undefined;
  replyInThread: boolean;
  threadId: string | undefined;
  patches: number;
  /** The image or file an `image` / `file` message shows. */
  upload: FakeUpload | undefined;
}

export interface FakeCard {
  cardId: string;
  card: Json;
  sequence: number;
  streaming: boolean;
  /** element_id → current content of markdown / plain_text elements. */
  elements: Map<string, string>;
}

export const fakeTenantToken = 't-fake-tenant-token';
/** Feishu's "request trigger frequency limit". */
export const rateLimitCode = 99991400;
export const sequenceErrorCode = 300317;
export const streamingClosedCode = 300309;

export interface FakeFeishuOptions {
  botOpenId?: string;
  /**
   * Extra ids in the bot/v3/info answer. The documented answer has only `open_id`; these let a test give the
   * bot the ids a mention entry may carry instead.
   */
  botUnionId?: string;
  botUserId?: string;
  appSecret?: string;
}

function elementsOf(card: Json): Json[] {
  const body = card.body as Json | undefined;
  return Array.isArray(body?.elements) ? (body.elements as Json[]) : [];
}

function parseJson(text: unknown): Json | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

export class FakeFeishuApi {
  readonly calls: RecordedCall[] = [];
  readonly messages = new Map<string, FakeMessage>();
  readonly cards = new Map<string, FakeCard>();
  readonly reactions = new Map<string, { messageId: string; emojiType: string; deleted: boolean }>();
  readonly botOpenId: string;
  readonly botUnionId: string | undefined;
  readonly botUserId: string | undefined;
  /** People the contact API answers for, by open_id. */
  readonly contactUsers = new Map<string, FakeContactUser>();
  /** Message resources, uploads and their counts. */
  readonly files = new FakeFeishuFiles();
  /** Topics people started, which `GET /open-apis/im/v1/messages?container_id_type=thread` lists. */
  readonly topics = new FakeFeishuTopics();
  /** When true, the contact API answers like an app without any contact scope (code 99991672). */
  contactScopeMissing = false;
  /**
   * What `GET /open-apis/im/v1/messages/:message_id` lists, by message id: for a merge_forward, the message
   * itself and then its sub-messages, each with `upper_message_id` (as Feishu answers). Others: not found.
   */
  readonly messageItems = new Map<string, Json[]>();
  /** Direct chats with the bot by the person's open_id, made by the first message sent to them by open_id. */
  readonly directChats = new Map<string, string>();
  /** Apps beside the default one (several self-built apps, store apps) and the tokens issued to them. */
  readonly auth = new FakeFeishuAuth();
  /** Extra routes (e.g. the long-connection endpoint) tried before the built-in ones. */
  readonly extraRoutes: Array<(call: RecordedCall) => { status: number; body: Json } | undefined> = [];
  private readonly rules: Array<FailureRule & { remaining: number }> = [];
  private readonly appSecret: string;
  private counter = 0;
  private server!: Server;
  baseUrl = '';

  private constructor(options: FakeFeishuOptions) {
    this.botOpenId = options.botOpenId ?? 'ou_bot_butler';
    this.botUnionId = options.botUnionId;
    this.botUserId = options.botUserId;
    this.appSecret = options.appSecret ?? 'test-app-secret';
  }

  static async start(options: FakeFeishuOptions = {}): Promise<FakeFeishuApi> {
    const fake = new FakeFeishuApi(options);
    fake.server = createServer((request, response) => {
      fake.handle(request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.baseUrl = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The underlying server, for tests that add a WebSocket upgrade handler. */
  get httpServer(): Server {
    return this.server;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Makes the next matching calls fail (or stall). */
  fail(rule: FailureRule): void {
    this.rules.push({ ...rule, remaining: rule.times ?? 1 });
  }

  /** Rate-limits the next `times` matching calls the way Feishu does (HTTP 400, code 99991400). */
  rateLimit(path: string | RegExp, times = 1, method?: string): void {
    this.fail({
      path,
      status: 400,
      code: rateLimitCode,
      msg: 'request trigger frequency limit',
      times,
      ...(method ? { method } : {}),
    });
  }

  /** Every CardKit call fails until `restore()`. */
  cardkitUnavailable(): void {
    this.fail({
      path: /^\/open-apis\/cardkit\//,
      status: 503,
      code: 1,
      msg: 'service unavailable',
      times: Number.POSITIVE_INFINITY,
    });
  }

  restore(): void {
    this.rules.length = 0;
  }

  callsTo(method: string, path: string | RegExp): RecordedCall[] {
    return this.calls.filter(
      (call) =>
        call.method === method && (typeof path === 'string' ? call.path === path : path.test(call.path)),
    );
  }

  /** Messages the bot sent, in order. */
  sentMessages(): FakeMessage[] {
    return [...this.messages.values()];
  }

  /** What a person sees in a message: the text, or the markdown of its card (CardKit entity or inline JSON). */
  visibleText(messageId: string): string {
    const message = this.messages.get(messageId);
    if (!message) throw new Error(`no message ${messageId}`);
    if (message.msgType === 'text') return String(message.content.text ?? '');
    const reference =
      message.content.type === 'card' ? (message.content.data as Json | undefined) : undefined;
    if (reference) {
      const card = this.cards.get(String(reference.card_id));
      return card ? [...card.elements.values()].join('\n') : '';
    }
    return elementsOf(message.content)
      .filter((element) => element.tag === 'markdown')
      .map((element) => String(element.content))
      .join('\n');
  }

  /** The callback value of the button `elementId` that a message shows now, if it shows that button. */
  buttonValue(messageId: string, elementId: string): Json | undefined {
    const content = this.messages.get(messageId)?.content;
    const reference = content?.type === 'card' ? (content.data as Json | undefined) : undefined;
    const card = reference ? this.cards.get(String(reference.card_id))?.card : content;
    return buttonValue(card, elementId);
  }

  /** A person's p2p chat with the bot: the same `oc_…` each time, as Feishu answers a send by open_id. */
  private directChat(openId: string): string {
    const chatId = this.directChats.get(openId) ?? this.nextId('oc_p2p_');
    this.directChats.set(openId, chatId);
    return chatId;
  }

  private nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter.toString(16).padStart(6, '0')}${randomUUID().slice(0, 8)}`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', this.baseUrl);
    const raw = Buffer.concat(chunks);
    const text = raw.toString('utf8');
    const call: RecordedCall = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: text ? parseJson(text) : undefined,
      bytes: raw.length,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      at: Date.now(),
      status: 200,
      code: 0,
    };
    this.calls.push(call);
    const { status, body, download } = await this.answer(call, raw);
    call.status = status;
    call.code = typeof body.code === 'number' ? body.code : 0;
    if (download) {
      response.writeHead(status, { 'content-type': download.contentType }).end(download.bytes);
      return;
    }
    if (status === 302) response.setHeader('location', String(body.location));
    const payload = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(payload);
  }

  private async answer(call: RecordedCall, raw: Buffer): Promise<FakeAnswer> {
    const rule = this.rules.find(
      (candidate) =>
        candidate.remaining > 0 &&
        (!candidate.method || candidate.method === call.method) &&
        (typeof candidate.path === 'string' ? candidate.path === call.path : candidate.path.test(call.path)),
    );
    if (rule) {
      rule.remaining -= 1;
      if (rule.delayMs) await new Promise((resolve) => setTimeout(resolve, rule.delayMs));
      if (rule.status !== undefined || rule.code !== undefined) {
        return {
          status: rule.status ?? 200,
          body: { code: rule.code ?? 1, msg: rule.msg ?? 'injected failure' },
        };
      }
    }
    for (const route of this.extraRoutes) {
      const answered = route(call);
      if (answered) return answered;
    }
    const issued = this.auth.route(call);
    if (issued) return issued;
    if (call.path === '/open-apis/auth/v3/tenant_access_token/internal') {
      if (call.body?.app_secret !== this.appSecret)
        return { status: 200, body: { code: 10014, msg: 'app secret invalid' } };
      return {
        status: 200,
        body: { code: 0, msg: 'ok', tenant_access_token: fakeTenantToken, expire: 7200 },
      };
    }
    if (
      call.path.startsWith('/open-apis/') &&
      call.authorization !== `Bearer ${fakeTenantToken}` &&
      !this.auth.ownerOf(call)
    ) {
      return { status: 400, body: { code: 99991663, msg: 'Invalid access token for authorization' } };
    }
    return (
      this.files.route(call, raw) ??
      this.route(call) ?? {
        status: 404,
        body: { code: 404, msg: `fake Feishu has no ${call.method} ${call.path}` },
      }
    );
  }

  private ok(data: Json = {}): { status: number; body: Json } {
    return { status: 200, body: { code: 0, msg: 'success', data } };
  }

  private error(code: number, msg: string, status = 400): { status: number; body: Json } {
    return { status, body: { code, msg } };
  }

  private route(call: RecordedCall): { status: number; body: Json } | undefined {
    const { method, path, body } = call;
    if (method === 'GET' && path === '/open-apis/bot/v3/info') {
      return {
        status: 200,
        body: {
          code: 0,
          msg: 'ok',
          bot: {
            activate_status: 2,
            app_name: 'Butler',
            avatar_url: '',
            ip_white_list: [],
            open_id: this.botOpenId,
            ...(this.botUnionId ? { union_id: this.botUnionId } : {}),
            ...(this.botUserId ? { user_id: this.botUserId } : {}),
          },
        },
      };
    }
    let match = /^\/open-apis\/contact\/v3\/users\/([^/]+)$/.exec(path);
    if (method === 'GET' && match)
      return answerContactUser(this, decodeURIComponent(match[1] as string), call.query);
    if (method === 'GET' && path === '/open-apis/im/v1/messages')
      return this.topics.list(call.query, this.messages.values());
    if (method === 'POST' && path === '/open-apis/im/v1/messages') {
      if (call.query.receive_id_type !== 'chat_id' && call.query.receive_id_type !== 'open_id') {
        return this.error(99992402, 'field validation failed: receive_id_type');
      }
      const receiver = String(body?.receive_id);
      const chatId = call.query.receive_id_type === 'open_id' ? this.directChat(receiver) : receiver;
      return this.createMessage(chatId, undefined, false, call);
    }
    match = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(path);
    if (method === 'POST' && match && this.topics.recalled.has(match[1] as string))
      return this.error(230011, 'The message was recalled.');
    if (method === 'POST' && match) {
      const parent = this.messages.get(match[1] as string);
      return this.createMessage(
        parent?.chatId ?? 'oc_from_event',
        match[1],
        body?.reply_in_thread === true,
        call,
      );
    }
    match = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const items = this.messageItems.get(match[1] as string);
      return items ? this.ok({ items }) : this.error(230001, 'invalid message_id');
    }
    if (method === 'PATCH' && match) {
      const message = this.messages.get(match[1] as string);
      const content = parseJson(body?.content);
      if (message?.msgType !== 'interactive') return this.error(230001, 'invalid message_id');
      if (!content) return this.error(230099, 'invalid card content');
      const refused = refuseMessage('interactive', call.bytes, content);
      if (refused) return refused;
      message.content = content;
      message.patches += 1;
      return this.ok();
    }
    match = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions$/.exec(path);
    if (method === 'POST' && match) {
      const emojiType = String((body?.reaction_type as Json | undefined)?.emoji_type ?? '');
      const reactionId = this.nextId('reaction_');
      this.reactions.set(reactionId, { messageId: match[1] as string, emojiType, deleted: false });
      return this.ok({
        reaction_id: reactionId,
        reaction_type: { emoji_type: emojiType },
        operator: { operator_type: 'app' },
      });
    }
    match = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && match) {
      const reaction = this.reactions.get(match[2] as string);
      if (!reaction || reaction.deleted) return this.error(231003, 'reaction not found');
      reaction.deleted = true;
      return this.ok({ reaction_id: match[2] });
    }
    if (method === 'POST' && path === '/open-apis/cardkit/v1/cards') {
      const card = parseJson(body?.data);
      if (body?.type !== 'card_json' || !card || card.schema !== '2.0')
        return this.error(200860, 'invalid card json');
      const refused = refuseCardkit(call.bytes, card);
      if (refused) return refused;
      const cardId = this.nextId('7');
      const elements = new Map<string, string>();
      for (const element of elementsOf(card)) {
        if (
          typeof element.element_id === 'string' &&
          ['markdown', 'plain_text'].includes(String(element.tag))
        )
          elements.set(element.element_id, String(element.content ?? ''));
      }
      const streaming = (card.config as Json | undefined)?.streaming_mode === true;
      this.cards.set(cardId, { cardId, card, sequence: 0, streaming, elements });
      return this.ok({ card_id: cardId });
    }
    match = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)\/content$/.exec(path);
    if (method === 'PUT' && match) {
      const card = this.cards.get(match[1] as string);
      if (!card?.elements.has(match[2] as string)) return this.error(200850, 'card or element not found');
      // Text streaming only works while streaming mode is on (closed by us, or by CardKit after 10 minutes).
      if (!card.streaming) return this.error(streamingClosedCode, 'card is not in streaming mode');
      const content = String(body?.content ?? '');
      const refused = refuseCardkit(
        call.bytes,
        card.card,
        new Map(card.elements).set(match[2] as string, content),
      );
      if (refused) return refused;
      const failed = this.checkSequence(card, body?.sequence);
      if (failed) return failed;
      card.elements.set(match[2] as string, content);
      return this.ok();
    }
    match = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && match) return this.deleteElement(match[1] as string, match[2] as string, body);
    match = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/settings$/.exec(path);
    if (method === 'PATCH' && match) {
      const card = this.cards.get(match[1] as string);
      const settings = parseJson(body?.settings);
      if (!card || !settings) return this.error(200850, 'card not found or settings invalid');
      const refused = refuseCardkit(call.bytes, undefined);
      if (refused) return refused;
      const failed = this.checkSequence(card, body?.sequence);
      if (failed) return failed;
      const config = settings.config as Json | undefined;
      if (typeof config?.streaming_mode === 'boolean') card.streaming = config.streaming_mode;
      return this.ok();
    }
    match = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements$/.exec(path);
    if (method === 'POST' && match) return this.addElements(this.cards.get(match[1] as string), call);
    return undefined;
  }

  /** CardKit "delete element" (cardkit-v1/card-element/delete): allowed whether or not the card streams. */
  private deleteElement(cardId: string, elementId: string, body: Json | undefined) {
    const card = this.cards.get(cardId);
    const elements = card ? elementsOf(card.card) : [];
    const index = elements.findIndex((element) => element.element_id === elementId);
    if (!card || index < 0) return this.error(200850, 'card or element not found');
    const failed = this.checkSequence(card, body?.sequence);
    if (failed) return failed;
    elements.splice(index, 1);
    card.elements.delete(elementId);
    return this.ok();
  }

  /** CardKit "add elements": `append` at the end of the body (what Butler uses); ids unique per card. */
  private addElements(card: FakeCard | undefined, call: RecordedCall): { status: number; body: Json } {
    const elements: unknown = JSON.parse(String(call.body?.elements ?? 'null'));
    if (!card || call.body?.type !== 'append' || !Array.isArray(elements) || elements.length === 0)
      return this.error(200850, 'card not found or elements invalid');
    const idsIn = (value: unknown): string[] => JSON.stringify(value).match(/"element_id":"[^"]*"/g) ?? [];
    const ids = idsIn(card.card);
    const added = idsIn(elements);
    const valid = /^"element_id":"[A-Za-z][A-Za-z0-9_]{0,19}"$/;
    if (added.some((id) => !valid.test(id) || ids.includes(id)) || new Set(added).size !== added.length)
      return this.error(200861, 'element_id invalid or not unique');
    const grown = { ...card.card, body: { elements: [...elementsOf(card.card), ...(elements as Json[])] } };
    const refused = refuseCardkit(call.bytes, grown, card.elements);
    if (refused) return refused;
    const failed = this.checkSequence(card, call.body?.sequence);
    if (failed) return failed;
    card.card = grown;
    return this.ok();
  }

  private checkSequence(card: FakeCard, sequence: unknown): { status: number; body: Json } | undefined {
    if (typeof sequence !== 'number' || sequence <= card.sequence) {
      return this.error(
        sequenceErrorCode,
        `sequence number compare failed: ${String(sequence)} <= ${card.sequence}`,
      );
    }
    card.sequence = sequence;
    return undefined;
  }

  private createMessage(
    chatId: string,
    replyTo: string | undefined,
    replyInThread: boolean,
    call: RecordedCall,
  ) {
    const { body } = call;
    const content = parseJson(body?.content);
    const msgType = String(body?.msg_type ?? '');
    if (!content || !['text', 'interactive', 'post', 'image', 'file'].includes(msgType))
      return this.error(230001, 'invalid content or msg_type');
    const upload =
      msgType === 'image' || msgType === 'file' ? this.files.attachment(msgType, content) : undefined;
    if (upload && !('key' in upload)) return upload;
    // A card sent by reference was checked when CardKit created it.
    const refused = refuseMessage(msgType, call.bytes, content.type === 'card' ? undefined : content);
    if (refused) return refused;
    if (msgType === 'interactive' && content.type === 'card') {
      const cardId = String((content.data as Json | undefined)?.card_id);
      if (!this.cards.has(cardId)) return this.error(230099, 'card entity not found');
    }
    const parent = replyTo ? this.messages.get(replyTo) : undefined;
    const messageId = this.nextId('om_');
    const threadId = replyInThread ? (parent?.threadId ?? this.nextId('omt_')) : parent?.threadId;
    this.messages.set(messageId, {
      messageId,
      chatId,
      msgType,
      content,
      replyTo,
      replyInThread,
      threadId,
      patches: 0,
      upload,
    });
    return this.ok({
      message_id: messageId,
      ...(replyTo ? { root_id: parent?.replyTo ?? replyTo, parent_id: replyTo } : {}),
      ...(threadId ? { thread_id: threadId } : {}),
      msg_type: msgType,
      chat_id: chatId,
      create_time: String(Date.now()),
      update_time: String(Date.now()),
      deleted: false,
      updated: false,
      sender: { id: 'cli_fake', id_type: 'app_id', sender_type: 'app' },
      body: { content: body?.content },
    });
  }
}
