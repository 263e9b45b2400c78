import * as lark from '@larksuiteoapi/node-sdk';
import { endpointLane } from './feishu-lanes.js';
import { type JsonRecord, recordField, recordsField } from './fields.js';
import type { TenantCallsContext } from './tenant-context.js';

/**
 * The calls behind Feishu message search: the search itself and the messages it names, both with the asker's
 * own `user_access_token` (never the bot's), and the chat a result is in, with the app's token (who can read it).
 */
export interface FeishuSearchCalls {
  /**
   * `POST /open-apis/search/v2/message` (search-v2/message/create): the ids of the messages the token's owner may
   * read that match `body` (`query`, `chat_ids`, `start_time`, `end_time` in unix seconds), newest first.
   */
  searchMessages(userToken: string, body: JsonRecord, pageSize: number): Promise<string[]>;
  /** `GET /open-apis/im/v1/messages/:message_id` as the token's owner: the message's first item. */
  userMessage(userToken: string, messageId: string): Promise<JsonRecord | undefined>;
  /** `GET /open-apis/im/v1/chats/:chat_id` with the app's token (scope `im:chat:readonly`; the bot must be in it). */
  chatInfo(chatId: string): Promise<JsonRecord>;
}

const data = (body: JsonRecord) => recordField(body, 'data');

export function searchCalls(context: TenantCallsContext): FeishuSearchCalls {
  const { client, quietClient, call, paced, config, tenantKey } = context;
  const lane = tenantKey ? `${config.appId}:${tenantKey}` : config.appId;
  const tenantOptions = tenantKey ? lark.withTenantKey(tenantKey) : undefined;
  return {
    searchMessages: (userToken, body, pageSize) =>
      call(
        'message search',
        paced([endpointLane(lane, 'search.message')], () =>
          client.request(
            {
              method: 'POST',
              url: '/open-apis/search/v2/message',
              params: { page_size: pageSize, user_id_type: 'open_id' },
              data: body,
            },
            lark.withUserAccessToken(userToken),
          ),
        ),
        (answer) => {
          const items = data(answer)?.items;
          return Array.isArray(items) ? items.filter((item): item is string => typeof item === 'string') : [];
        },
      ),
    userMessage: (userToken, messageId) =>
      call(
        'message get (as the asker)',
        paced([endpointLane(lane, 'message.get')], () =>
          quietClient().request(
            {
              method: 'GET',
              url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}`,
              params: { user_id_type: 'open_id' },
            },
            lark.withUserAccessToken(userToken),
          ),
        ),
        (answer) => recordsField(data(answer), 'items')[0],
      ),
    chatInfo: (chatId) =>
      call(
        'chat get',
        paced([endpointLane(lane, 'chat.get')], () =>
          quietClient().request(
            {
              method: 'GET',
              url: `/open-apis/im/v1/chats/${encodeURIComponent(chatId)}`,
              params: { user_id_type: 'open_id' },
            },
            tenantOptions,
          ),
        ),
        (answer) => data(answer) ?? {},
      ),
  };
}
