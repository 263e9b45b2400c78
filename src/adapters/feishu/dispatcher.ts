import * as lark from '@larksuiteoapi/node-sdk';
import type { JsonRecord } from './fields.js';
import type { InboundHandlers } from './inbound.js';
import { larkLoggerLevel } from './lark-logger.js';

export interface FeishuDispatcher {
  /** The SDK dispatcher, for the long connection. */
  eventDispatcher: lark.EventDispatcher;
  /** Routes a verified, decrypted payload to its handler; resolves to the handler's answer. */
  dispatch(payload: JsonRecord): Promise<unknown>;
}

/**
 * The SDK's EventDispatcher with Butler's handlers. It is built without keys: verification and decryption happen
 * before it (webhook) or are not needed (long connection), so it is always invoked with `needCheck: false`.
 */
export function createFeishuDispatcher(handlers: InboundHandlers, larkLogger: lark.Logger): FeishuDispatcher {
  const eventDispatcher = new lark.EventDispatcher({
    logger: larkLogger,
    loggerLevel: larkLoggerLevel,
  }).register<{
    'card.action.trigger': (data: unknown) => Promise<unknown>;
  }>({
    'im.message.receive_v1': (data: unknown) => handlers.onMessage(data),
    'card.action.trigger': (data: unknown) => handlers.onCardAction(data),
  });
  return {
    eventDispatcher,
    dispatch: (payload) => eventDispatcher.invoke(payload, { needCheck: false }),
  };
}
