import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { encodeConversationKey, mainThread } from '../../core/contracts/conversation-key.js';
import type { InboundMessage } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import { plainText } from './approval-buttons.js';
import { type CardActionResponse, pending, refuseReplay, within } from './card-action.js';
import type { CardActionEvent } from './event-payloads.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';
import { defuseMentions } from './mentions.js';

/**
 * The welcome card (card JSON 2.0) a direct chat's first message gets before its answer: a short greeting and
 * the configured prompts as buttons. A click sends the prompt as the clicker's own message in that chat, so
 * what a button carries needs no more trust than what the person could type.
 */

export interface PromptButtonValue {
  butler: 'prompt';
  prompt: string;
}

const greeting =
  "**Hi, I'm Butler.** Ask me anything here, or mention me in a group. Before I do anything that could " +
  'change something, I ask someone allowed to approve it. To start, try:';

export function welcomeCard(prompts: readonly string[]): JsonRecord {
  return {
    schema: '2.0',
    config: { summary: { content: "Hi, I'm Butler" } },
    body: {
      elements: [
        { tag: 'markdown', element_id: 'welcome', content: greeting },
        ...prompts.map((prompt, index) => ({
          tag: 'button',
          element_id: `prompt_${index}`,
          type: 'default',
          // Configured text, shown as plain text: it pings nobody.
          text: plainText(defuseMentions(prompt)),
          behaviors: [{ type: 'callback', value: { butler: 'prompt', prompt } satisfies PromptButtonValue }],
        })),
      ],
    },
  };
}

/** The value of a prompt button, or undefined for any other click. */
export function parsePromptValue(value: unknown): PromptButtonValue | undefined {
  const record = asRecord(value);
  const prompt = stringField(record, 'prompt');
  return record?.butler === 'prompt' && prompt ? { butler: 'prompt', prompt } : undefined;
}

/**
 * A click on a prompt: the prompt is accepted as the clicker's message in the chat the card is in (a direct
 * chat: its `main` thread), deduplicated by the click's event id, so a redelivered click is answered once.
 */
export async function handlePromptClick(
  event: CardActionEvent,
  value: PromptButtonValue,
  dependencies: {
    intake: ButlerIntake;
    logger: Logger;
    now: () => number;
    answerWithinMilliseconds: number;
  },
): Promise<CardActionResponse> {
  const { intake, logger } = dependencies;
  const fields = { eventId: event.eventId, user: event.operatorOpenId, action: 'prompt' };
  const replayed = refuseReplay(event, dependencies, fields);
  if (replayed) return replayed;
  if (!event.eventId || !event.tenantKey || !event.openChatId || !event.openMessageId) {
    logger.warn(fields, 'Feishu prompt click without event id, tenant, chat or card');
    return { toast: { type: 'error', content: 'This button is not one Butler understands.' } };
  }
  const message: InboundMessage = {
    kind: 'message',
    address: {
      platform: 'feishu',
      workspace: event.tenantKey,
      channel: event.openChatId,
      thread: mainThread,
    },
    // The welcome card stands for the message: the working indicator shows on it.
    messageId: event.openMessageId,
    eventId: event.eventId,
    dedupKey: `prompt:${event.eventId}`,
    user: { id: event.operatorOpenId },
    text: value.prompt,
    isMention: false,
    isDirect: true,
    sentAt: new Date(dependencies.now()).toISOString(),
  };
  const logFields = { ...fields, conversation: encodeConversationKey(message.address) };
  const accepting = intake.accept(message);
  try {
    const accepted = await within(accepting, dependencies.answerWithinMilliseconds);
    if (accepted === pending) {
      logger.warn(logFields, 'Feishu prompt click is slow; answering before the 3 s deadline');
      accepting.catch((error: unknown) => logger.error({ ...logFields, err: error }, 'prompt not accepted'));
      return { toast: { type: 'info', content: 'Sent.' } };
    }
    logger.info({ ...logFields, status: accepted.status }, 'Feishu prompt click');
    if (accepted.status === 'ignored')
      return { toast: { type: 'warning', content: 'Butler does not answer you here.' } };
    return { toast: { type: 'success', content: 'Sent.' } };
  } catch (error) {
    logger.error({ ...logFields, err: error }, 'prompt not accepted');
    return { toast: { type: 'error', content: 'Butler could not take that. Please try again.' } };
  }
}
