import * as lark from '@larksuiteoapi/node-sdk';
import type { JsonRecord } from './fields.js';
import type { InboundHandlers } from './inbound.js';
import { larkLoggerLevel } from './lark-logger.js';

/** The callback of a click on a card (JSON 2.0 cards, `card.action.trigger`). */
export const cardActionEventType = 'card.action.trigger';

export interface FeishuDispatcher {
  /** The SDK dispatcher, for the long connection. */
  eventDispatcher: lark.EventDispatcher;
  /** Routes a verified, decrypted payload to its handler; resolves to the handler's answer. */
  dispatch(payload: JsonRecord): Promise<unknown>;
}

/**
 * Events an app commonly subscribes to (or Butler's own typing reaction triggers) that Butler does not act on.
 * Without a handler the SDK logs a WARN "no … handle" for each one; these are acknowledged quietly instead.
 * Names as in the SDK's typed handles (`@larksuiteoapi/node-sdk` types, `EventDispatcher.register`).
 */
export const ignoredEventTypes = [
  'im.message.message_read_v1',
  'im.message.reaction.created_v1',
  'im.message.reaction.deleted_v1',
  'im.message.recalled_v1',
  'im.chat.member.bot.added_v1',
  'im.chat.member.bot.deleted_v1',
] as const;

/** What a store app's dispatcher handles beside the events every app has. */
export interface StoreAppEvents {
  /** Where the SDK's own `app_ticket` handler keeps the ticket Feishu pushes (the Client reads it there). */
  cache: lark.Cache;
  /** `app_uninstalled` (v1 event: `app_id`, `tenant_key`): the app was removed from a tenant. */
  onUninstalled: (data: unknown) => Promise<unknown>;
}

/**
 * The SDK's EventDispatcher with Butler's handlers. It is built without keys: verification and decryption happen
 * before it (webhook) or are not needed (long connection), so it is always invoked with `needCheck: false`.
 */
export function createFeishuDispatcher(
  handlers: InboundHandlers,
  larkLogger: lark.Logger,
  storeApp?: StoreAppEvents,
): FeishuDispatcher {
  const quiet = Object.fromEntries(
    ignoredEventTypes.map((eventType) => [
      eventType,
      (data: unknown) => handlers.onIgnoredEvent(eventType, data),
    ]),
  );
  const eventDispatcher = new lark.EventDispatcher({
    logger: larkLogger,
    loggerLevel: larkLoggerLevel,
    ...(storeApp ? { cache: storeApp.cache } : {}),
  }).register<Record<string, (data: unknown) => Promise<unknown>>>({
    ...quiet,
    ...(storeApp ? { app_uninstalled: storeApp.onUninstalled } : {}),
    'im.message.receive_v1': (data: unknown) => handlers.onMessage(data),
    [cardActionEventType]: (data: unknown) => handlers.onCardAction(data),
  });
  return {
    eventDispatcher,
    dispatch: (payload) => eventDispatcher.invoke(payload, { needCheck: false }),
  };
}
