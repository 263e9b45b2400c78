import * as lark from '@larksuiteoapi/node-sdk';
import { FileTooLargeError } from '../../core/contracts/files.js';
import { isTimeZone } from '../../core/schedules/index.js';
import type { RunOptions } from '../pacing/index.js';
import { requireString } from './feishu-api-error.js';
import type { FeishuApi } from './feishu-api-types.js';
import { endpointLane, noRetries, perKeyLane } from './feishu-lanes.js';
import { asRecord, type JsonRecord, recordField, recordsField, stringField } from './fields.js';
import { fileCallError, headerValue, readWithin, untilAborted } from './resource-download.js';
import { searchCalls } from './search-calls.js';
import type { TenantCallsContext } from './tenant-context.js';

/** Each Open API call Butler makes, as one tenant's (feishu-api.ts builds the clients and the pacing). */

/**
 * Path parameters as the Lark SDK puts them in its URLs: verbatim. Ids and keys come from payloads (a file key in a
 * message's content), so each is encoded: `../` in one can never reach another endpoint with the bot's token.
 */
function pathOf<T extends Record<string, string>>(path: T): T {
  return Object.fromEntries(
    Object.entries(path).map(([name, value]) => [name, encodeURIComponent(value)]),
  ) as T;
}

/**
 * The scope to name when Feishu's refusal does not: uploads ask for im:resource (im-v1/image/create, file/create);
 * downloads for any one of im:message, im:message:readonly or im:message.history:readonly, not im:resource
 * (im-v1/message-resource/get; platforms.md "Checked 2026-11-27").
 */
const uploadScope = 'im:resource';
const downloadScope = 'im:message (or im:message:readonly)';

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

type Request = () => Promise<unknown>;

const data = (body: JsonRecord) => recordField(body, 'data');

export function tenantCalls(context: TenantCallsContext): FeishuApi {
  const { config, client, quietClient, pacer, call, paced, tenantKey } = context;
  const requestOptions = tenantKey ? lark.withTenantKey(tenantKey) : undefined;
  const lane = tenantKey ? `${config.appId}:${tenantKey}` : config.appId;
  /** Uploads answer with their `data` alone (the SDK drops `code`): the key is what there is to check. */
  const upload = (operation: string, endpoint: string, keyField: string, request: Request) =>
    pacer.run(
      operation,
      [endpointLane(lane, endpoint)],
      async () => {
        let answer: unknown;
        try {
          answer = await request();
        } catch (error) {
          throw await fileCallError(operation, error, uploadScope);
        }
        return requireString(operation, stringField(asRecord(answer), keyField));
      },
      noRetries,
    );
  /**
   * A CardKit operation on one card: paced per endpoint and per card (only this process writes a card it
   * streams, so that limit is all its own); its answer has nothing to read.
   */
  const cardCall = (
    operation: string,
    endpoint: string,
    cardId: string,
    request: Request,
    runOptions: RunOptions = {},
  ) =>
    call(
      operation,
      paced(
        [endpointLane(lane, endpoint), { ...perKeyLane(`feishu:${lane}:card:${cardId}`, 10), owned: true }],
        request,
      ),
      () => undefined,
      runOptions,
    );

  return {
    ...searchCalls(context),
    botInfo: () =>
      call(
        'bot info',
        () => client.request({ method: 'GET', url: '/open-apis/bot/v3/info' }, requestOptions),
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
          client.im.v1.message.get(
            {
              path: pathOf({ message_id: messageId }),
              params: { user_id_type: 'open_id' },
            },
            requestOptions,
          ),
        (body) => recordsField(data(body), 'items'),
      ),
    // GET /open-apis/im/v1/messages?container_id_type=thread (open.larksuite.com im-v1/message/list: a topic's
    // messages; one of im:message, im:message:readonly, im:message.history:readonly, and in a group also "read all
    // messages in group chats"; the bot must be in the chat; 1000/min and 50/s per app).
    topicMessage: (threadId) =>
      call(
        'message list',
        paced([endpointLane(lane, 'message.list')], () =>
          quietClient().im.v1.message.list(
            {
              params: {
                container_id_type: 'thread',
                container_id: threadId,
                sort_type: 'ByCreateTimeAsc',
                page_size: 20,
              },
            },
            requestOptions,
          ),
        ),
        // A recalled message is listed (`deleted: true`) but cannot be answered.
        (body) =>
          stringField(
            recordsField(data(body), 'items').find((item) => item.deleted !== true),
            'message_id',
          ),
      ),
    // GET /open-apis/contact/v3/users/:user_id?user_id_type=open_id → data.user{name, en_name, time_zone, …}
    // (open.feishu.cn contact-v3/user/get: one of contact:contact.base:readonly, contact:contact:readonly_as_app,
    // … to call it; `name` only with the field scope contact:user.base:readonly).
    userProfile: (openId) =>
      call(
        'contact user get',
        () =>
          quietClient().contact.v3.user.get(
            {
              path: pathOf({ user_id: openId }),
              params: { user_id_type: 'open_id' },
            },
            requestOptions,
          ),
        (body) => {
          const user = recordField(data(body), 'user');
          const zone = stringField(user, 'time_zone');
          return {
            name: stringField(user, 'name') ?? stringField(user, 'en_name'),
            timezone: zone && isTimeZone(zone) ? zone : undefined,
          };
        },
      ),
    createCard: (card) =>
      call(
        'card create',
        paced([endpointLane(lane, 'card.create')], () =>
          client.cardkit.v1.card.create(
            { data: { type: 'card_json', data: JSON.stringify(card) } },
            requestOptions,
          ),
        ),
        (body) => requireString('card create', stringField(data(body), 'card_id')),
      ),
    updateCardElement: (cardId, elementId, content, sequence, priority) =>
      cardCall(
        'card element update',
        'cardElement.content',
        cardId,
        () =>
          client.cardkit.v1.cardElement.content(
            {
              path: pathOf({ card_id: cardId, element_id: elementId }),
              data: { content, sequence, uuid: `c_${cardId}_${sequence}` },
            },
            requestOptions,
          ),
        priority ? { priority } : {},
      ),
    updateCardSettings: (cardId, settings, sequence) =>
      cardCall('card settings', 'card.settings', cardId, () =>
        client.cardkit.v1.card.settings(
          {
            path: pathOf({ card_id: cardId }),
            data: { settings: JSON.stringify(settings), sequence, uuid: `s_${cardId}_${sequence}` },
          },
          requestOptions,
        ),
      ),
    deleteCardElement: (cardId, elementId, sequence) =>
      cardCall('card element delete', 'cardElement.delete', cardId, () =>
        client.cardkit.v1.cardElement.delete(
          {
            path: pathOf({ card_id: cardId, element_id: elementId }),
            data: { sequence, uuid: `d_${cardId}_${sequence}` },
          },
          requestOptions,
        ),
      ),
    appendCardElements: (cardId, elements, sequence) =>
      cardCall('card elements', 'cardElement.create', cardId, () =>
        client.cardkit.v1.cardElement.create(
          {
            path: pathOf({ card_id: cardId }),
            data: {
              type: 'append',
              elements: JSON.stringify(elements),
              sequence,
              uuid: `e_${cardId}_${sequence}`,
            },
          },
          requestOptions,
        ),
      ),
    sendMessage: (destination, message) => {
      const content = JSON.stringify(message.content);
      const readId = (body: JsonRecord) =>
        requireString('message send', stringField(data(body), 'message_id'));
      const chatLane = [perKeyLane(`feishu:${lane}:message.send:${destination.chatId}`, 5)];
      if (destination.replyTo) {
        const replyTo = destination.replyTo;
        return call(
          'message reply',
          paced(chatLane, () =>
            client.im.v1.message.reply(
              {
                path: pathOf({ message_id: replyTo }),
                data: { content, msg_type: message.msgType, reply_in_thread: destination.replyInThread },
              },
              requestOptions,
            ),
          ),
          readId,
        );
      }
      return call(
        'message create',
        paced(chatLane, () =>
          client.im.v1.message.create(
            {
              params: { receive_id_type: 'chat_id' },
              data: { receive_id: destination.chatId, content, msg_type: message.msgType },
            },
            requestOptions,
          ),
        ),
        readId,
      );
    },
    // Sent by open_id, a message lands in the person's direct chat with the bot, whose id the answer carries.
    // Sends count 5 QPS per user as well as per chat (platforms.md §13).
    sendToPerson: (openId, message) =>
      call(
        'message create',
        paced([perKeyLane(`feishu:${lane}:message.send:${openId}`, 5)], () =>
          client.im.v1.message.create(
            {
              params: { receive_id_type: 'open_id' },
              data: {
                receive_id: openId,
                content: JSON.stringify(message.content),
                msg_type: message.msgType,
              },
            },
            requestOptions,
          ),
        ),
        (body) => ({
          messageId: requireString('message create', stringField(data(body), 'message_id')),
          chatId: requireString('message create', stringField(data(body), 'chat_id')),
        }),
      ),
    patchMessage: (messageId, card, priority) =>
      call(
        'message patch',
        paced(
          [endpointLane(lane, 'message.patch'), perKeyLane(`feishu:${lane}:message.patch:${messageId}`, 5)],
          () =>
            client.im.v1.message.patch(
              {
                path: pathOf({ message_id: messageId }),
                data: { content: JSON.stringify(card) },
              },
              requestOptions,
            ),
        ),
        () => undefined,
        priority ? { priority } : {},
      ),
    // The typing reaction is cosmetic: last in line on its endpoint's budget, and given up with `signal`.
    addReaction: (messageId, emojiType, signal) =>
      call(
        'reaction create',
        paced([endpointLane(lane, 'messageReaction.create')], () =>
          client.im.v1.messageReaction.create(
            {
              path: pathOf({ message_id: messageId }),
              data: { reaction_type: { emoji_type: emojiType } },
            },
            requestOptions,
          ),
        ),
        (body) => requireString('reaction create', stringField(data(body), 'reaction_id')),
        { priority: 'cosmetic', ...(signal ? { signal } : {}) },
      ),
    deleteReaction: (messageId, reactionId) =>
      call(
        'reaction delete',
        paced([endpointLane(lane, 'messageReaction.delete')], () =>
          client.im.v1.messageReaction.delete(
            {
              path: pathOf({ message_id: messageId, reaction_id: reactionId }),
            },
            requestOptions,
          ),
        ),
        () => undefined,
        { priority: 'cosmetic' },
      ),
    share: (endpoint) => pacer.share(endpointLane(lane, endpoint)),
    // open.feishu.cn im-v1/message-resource/get: `type` image for images (also those in posts), file for files,
    // audio and video; the SDK streams the answer. The bot must be in the chat; at most 100 MB.
    downloadResource: ({ messageId, fileKey, type }, { maxBytes, signal }) => {
      const operation = 'message resource get';
      const lanes = [endpointLane(lane, 'messageResource.get')];
      return pacer.run(
        operation,
        lanes,
        async () => {
          const request = client.im.v1.messageResource.get(
            {
              path: pathOf({ message_id: messageId, file_key: fileKey }),
              params: { type },
            },
            requestOptions,
          );
          let answer: Awaited<typeof request>;
          try {
            answer = await untilAborted(request, signal, (late) => late.getReadableStream().destroy());
          } catch (error) {
            throw signal?.aborted ? error : await fileCallError(operation, error, downloadScope);
          }
          const stream = answer.getReadableStream();
          if (Number(headerValue(answer.headers, 'content-length')) > maxBytes) {
            stream.destroy();
            throw new FileTooLargeError(maxBytes);
          }
          const bytes = await readWithin(stream, maxBytes, signal);
          const mimeType = headerValue(answer.headers, 'content-type')?.split(';')[0]?.trim();
          return { bytes, mimeType: mimeType || undefined };
        },
        noRetries,
      );
    },
    // im-v1/image/create (multipart image_type, image; at most 10 MB, not empty) and im-v1/file/create
    // (file_type, file_name, file; at most 30 MB, not empty). A Buffer, as the SDK's samples send it.
    uploadImage: (bytes) =>
      upload('image create', 'image.create', 'image_key', () =>
        client.im.v1.image.create(
          { data: { image_type: 'message', image: asBuffer(bytes) } },
          requestOptions,
        ),
      ),
    uploadFile: ({ name, fileType, bytes }) =>
      upload('file create', 'file.create', 'file_key', () =>
        client.im.v1.file.create(
          {
            data: { file_type: fileType, file_name: name, file: asBuffer(bytes) },
          },
          requestOptions,
        ),
      ),
  };
}
