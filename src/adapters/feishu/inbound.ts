import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { ApprovalCard, ApprovalDetails } from '../../core/contracts/approval-card.js';
import { encodeConversationKey } from '../../core/contracts/conversation-key.js';
import { ButlerError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { FeishuBotIdentity } from './bot-identity.js';
import { type CardActionResponse, handleCardAction } from './card-action.js';
import { parseCardActionEvent, parseMessageReceiveEvent } from './event-payloads.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';
import { normalizeMessageEvent } from './normalize.js';
import { parseStopValue } from './stop-button.js';
import { handleStopClick } from './stop-click.js';
import { handlePromptClick, parsePromptValue } from './welcome-card.js';

export interface InboundOptions {
  intake: ButlerIntake;
  logger: Logger;
  now: () => number;
  maxAgeMilliseconds: number;
  /**
   * Who the bot is in a tenant (GET /open-apis/bot/v3/info): a self-built app's is known once the connector has
   * started, a store app's is asked for per tenant.
   */
  botIdentity: (tenantKey: string) => Promise<FeishuBotIdentity | undefined>;
  /** Whether this app serves the tenant an event comes from; an event it does not is acknowledged and dropped. */
  admit: (tenantKey: string | undefined) => Promise<boolean>;
  cardAnswerWithinMilliseconds: number;
  updateCardLater: (tenantKey: string, messageId: string, card: ApprovalCard) => Promise<void>;
  /** Posts a request's whole arguments below its card; returns how many messages it took. */
  sendArguments: (tenantKey: string, details: ApprovalDetails, cardMessageId: string) => Promise<number>;
  /** A person's name (contact API, cached), for who stopped a reply; undefined when unknown. Never throws. */
  userName: (tenantKey: string, openId: string) => Promise<string | undefined>;
}

export interface InboundHandlers {
  onMessage(data: unknown): Promise<JsonRecord>;
  onCardAction(data: unknown): Promise<CardActionResponse>;
  /** Events the app may be subscribed to that Butler does not act on: acknowledged, logged at debug. */
  onIgnoredEvent(eventType: string, data: unknown): Promise<JsonRecord>;
}

/**
 * The EventDispatcher's handlers, shared by webhook and long connection. A message is acknowledged only once
 * the core has durably accepted it, and never waits for the model.
 */
export function createInboundHandlers(options: InboundOptions): InboundHandlers {
  const { intake, logger } = options;
  return {
    async onMessage(data) {
      const event = parseMessageReceiveEvent(data);
      if (!(await options.admit(event.tenantKey))) return {};
      const bot = await options.botIdentity(event.tenantKey);
      // Not acknowledging makes Feishu deliver it again once Butler knows who it is.
      if (!bot) throw new ButlerError('feishu_not_ready', 'Feishu bot identity is not loaded yet');
      const fields = { eventId: event.eventId, messageId: event.messageId };
      const result = normalizeMessageEvent(event, {
        bot,
        nowMilliseconds: options.now(),
        maxAgeMilliseconds: options.maxAgeMilliseconds,
      });
      if (result.kind === 'skip') {
        if (result.reason === 'too_old') {
          logger.info(
            { ...fields, sentAt: new Date(event.createTime).toISOString() },
            'Feishu message too old; skipped',
          );
        } else {
          logger.debug({ ...fields, reason: result.reason }, 'Feishu message skipped');
        }
        return {};
      }
      const accepted = await intake.accept(result.message);
      logger.info(
        {
          ...fields,
          conversation: encodeConversationKey(result.message.address),
          user: event.senderOpenId,
          status: accepted.status,
        },
        'Feishu message received',
      );
      return {};
    },

    async onCardAction(data) {
      const event = parseCardActionEvent(data);
      if (!(await options.admit(event.tenantKey))) return {};
      // Only a self-built app (one tenant) admits a click that names no tenant.
      const tenantKey = event.tenantKey ?? '';
      const stop = parseStopValue(event.value);
      if (stop) {
        return handleStopClick(event, stop, {
          intake,
          logger,
          now: options.now,
          answerWithinMilliseconds: options.cardAnswerWithinMilliseconds,
          userName: options.userName,
        });
      }
      const prompt = parsePromptValue(event.value);
      if (prompt) {
        return handlePromptClick(event, prompt, {
          intake,
          logger,
          now: options.now,
          answerWithinMilliseconds: options.cardAnswerWithinMilliseconds,
        });
      }
      return handleCardAction(event, {
        intake,
        logger,
        now: options.now,
        answerWithinMilliseconds: options.cardAnswerWithinMilliseconds,
        updateCardLater: (messageId, card) => options.updateCardLater(tenantKey, messageId, card),
        sendArguments: (details, cardMessageId) => options.sendArguments(tenantKey, details, cardMessageId),
      });
    },

    async onIgnoredEvent(eventType, data) {
      const record = asRecord(data);
      logger.debug(
        { eventType, eventId: stringField(record, 'event_id') ?? stringField(record, 'uuid') },
        'Feishu event ignored',
      );
      return {};
    },
  };
}
