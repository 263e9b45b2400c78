import type { Logger } from '../../core/contracts/logger.js';
import type {
  Audience,
  MessageSearch,
  SearchAnswer,
  SearchCredential,
  SearchHit,
  SearchRequest,
} from '../../core/contracts/message-search.js';
import { ExpiringMap } from '../expiring-map.js';
import { FeishuApiError } from './feishu-api-error.js';
import type { FeishuApi } from './feishu-api-types.js';
import { asRecord, type JsonRecord, recordField, stringField } from './fields.js';
import type { FeishuUserNames } from './user-names.js';

/**
 * Feishu message search as the asker: `search/v2/message` and then each message it names, both with the
 * asker's own user access token (the core gets it from their `feishu` connection), so Feishu answers only
 * what that person may read. Who else may read a result's chat comes from the chat itself, read with the
 * app's token; a chat the bot is not in cannot be read and counts as private. The API gives no link to a
 * single message: a result links to its chat.
 */

/** Feishu's answers for a user token it no longer takes (expired, revoked, not a user token). */
const credentialRefusals = new Set([99991663, 99991668, 99991677, 20005]);
/** The user token lacks a scope (`search:message`). */
const scopeRefusals = new Set([99991679, 99991672]);

export function createFeishuMessageSearch(options: {
  api: FeishuApi;
  names: FeishuUserNames;
  baseUrl: string;
  logger: Logger;
}): MessageSearch {
  const { api, names, logger } = options;
  // By chat: the lookup itself, so results read at once from one chat ask Feishu once.
  const chats = new ExpiringMap<string, Promise<JsonRecord | undefined>>({ ttlMs: 60_000, maxEntries: 2000 });
  const applink = options.baseUrl.includes('larksuite')
    ? 'https://applink.larksuite.com'
    : 'https://applink.feishu.cn';

  function chatOf(chatId: string): Promise<JsonRecord | undefined> {
    const known = chats.get(chatId);
    if (known) return known;
    const lookup = api.chatInfo(chatId).catch((error: unknown) => {
      // The bot is not in it (or it is gone): Butler cannot say who reads it. Anything else is asked again.
      if (!(error instanceof FeishuApiError && error.httpStatus !== undefined && error.httpStatus < 500))
        chats.delete(chatId);
      return undefined;
    });
    chats.set(chatId, lookup);
    return lookup;
  }

  async function hitOf(workspace: string, item: JsonRecord): Promise<SearchHit | undefined> {
    const chatId = stringField(item, 'chat_id');
    if (!chatId || item.deleted === true) return undefined;
    const senderId = stringField(recordField(item, 'sender'), 'id');
    const created = Number(stringField(item, 'create_time'));
    const chat = await chatOf(chatId);
    const name = chat ? stringField(chat, 'name') : undefined;
    return {
      conversationId: chatId,
      ...(name ? { conversationName: name } : {}),
      author:
        (senderId && (await names.get(workspace, senderId).catch(() => undefined))) ?? senderId ?? 'someone',
      sentAt: Number.isFinite(created) ? new Date(created).toISOString() : '',
      text: messageText(item),
      permalink: `${applink}/client/chat/open?openChatId=${encodeURIComponent(chatId)}`,
    };
  }

  async function search(
    workspace: string,
    request: SearchRequest,
    credential: SearchCredential,
  ): Promise<SearchAnswer> {
    if (credential.kind !== 'user_token')
      return { ok: false, refusal: 'credential', detail: 'Feishu searches with a user access token' };
    const seconds = (date: Date) => String(Math.floor(date.getTime() / 1000));
    try {
      const ids = await api.searchMessages(
        credential.token,
        {
          query: request.query,
          ...(request.channels ? { chat_ids: [...request.channels] } : {}),
          ...(request.after ? { start_time: seconds(request.after) } : {}),
          ...(request.before ? { end_time: seconds(request.before) } : {}),
        },
        request.limit,
      );
      // The person waits: the messages are read at once, not one after another (each call is paced).
      const hits = await Promise.all(
        ids.slice(0, request.limit).map(async (id) => {
          const item = await api.userMessage(credential.token, id);
          return item ? hitOf(workspace, item) : undefined;
        }),
      );
      return { ok: true, hits: hits.filter((hit): hit is SearchHit => hit !== undefined) };
    } catch (error) {
      return refusalOf(error);
    }
  }

  function refusalOf(error: unknown): SearchAnswer {
    const code = error instanceof FeishuApiError ? error.feishuCode : undefined;
    if (code !== undefined && scopeRefusals.has(code))
      return {
        ok: false,
        refusal: 'scope',
        detail: `Feishu refused the search (code ${code}): a scope is missing`,
      };
    if (
      (code !== undefined && credentialRefusals.has(code)) ||
      (error instanceof FeishuApiError && error.httpStatus === 401)
    )
      return { ok: false, refusal: 'credential', detail: 'Feishu refused the user token' };
    logger.warn({ platform: 'feishu', err: error }, 'message search failed');
    return {
      ok: false,
      refusal: 'failed',
      detail: `Feishu's search failed${code !== undefined ? ` (code ${code})` : ''}; try again in a minute`,
    };
  }

  async function audienceOf(_workspace: string, chatId: string): Promise<Audience | undefined> {
    const chat = await chatOf(chatId);
    if (!chat) return undefined;
    if (chat.external === true) return 'external';
    if (stringField(chat, 'chat_mode') === 'p2p') return 'direct';
    return stringField(chat, 'chat_type') === 'public' ? 'public' : 'private';
  }

  return { search, audienceOf };
}

/** What a message says, as text: a text message's text, a post's words, or its kind. */
function messageText(item: JsonRecord): string {
  const type = stringField(item, 'msg_type') ?? 'message';
  let content: JsonRecord | undefined;
  try {
    content = asRecord(JSON.parse(stringField(recordField(item, 'body'), 'content') ?? ''));
  } catch {
    content = undefined;
  }
  if (type === 'text') return stringField(content, 'text') ?? '';
  if (type === 'post') {
    const words: string[] = [];
    const title = stringField(content, 'title');
    if (title) words.push(title);
    const rows = Array.isArray(content?.content) ? content.content : [];
    for (const row of rows)
      for (const part of Array.isArray(row) ? row : [])
        if (typeof asRecord(part)?.text === 'string') words.push(String(asRecord(part)?.text));
    return words.join(' ');
  }
  return `[${type}]`;
}
