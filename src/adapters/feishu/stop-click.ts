import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { encodeConversationKey } from '../../core/contracts/conversation-key.js';
import type { ChatUser, ConversationAddress } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import { type CardActionResponse, pending, refuseReplay, within } from './card-action.js';
import type { CardActionEvent } from './event-payloads.js';
import type { StopButtonValue } from './stop-button.js';

export interface StopClickDependencies {
  intake: ButlerIntake;
  logger: Logger;
  now: () => number;
  /** Feishu drops answers after 3 s; answer before then. */
  answerWithinMilliseconds: number;
  /** The clicker's name for "Stopped by …" (contact API, cached); undefined when unknown. Never throws. */
  userName: (tenantKey: string, openId: string) => Promise<string | undefined>;
}

/** A name not known by then is left out: the reply then says who stopped it by open_id. */
const nameWithinMilliseconds = 500;

const stoppingToast = { toast: { type: 'info', content: 'Stopping…' } } as const;

/**
 * A click on a reply's Stop button: asks the core to stop the turn running in the card's conversation (the
 * chat from Feishu's callback, the thread from the button) with the clicker as who stopped it. The toast goes
 * to the clicker only; the reply itself shows "Stopped by …" once the turn ends.
 */
export async function handleStopClick(
  event: CardActionEvent,
  value: StopButtonValue,
  dependencies: StopClickDependencies,
): Promise<CardActionResponse> {
  const { intake, logger } = dependencies;
  const fields = { eventId: event.eventId, user: event.operatorOpenId, action: 'stop' };
  const replayed = refuseReplay(event, dependencies, fields);
  if (replayed) return replayed;
  if (!event.tenantKey || !event.openChatId) {
    logger.warn(fields, 'Feishu Stop click without tenant or chat');
    return { toast: { type: 'error', content: 'This button is not one Butler understands.' } };
  }
  const address: ConversationAddress = {
    platform: 'feishu',
    workspace: event.tenantKey,
    channel: event.openChatId,
    thread: value.thread,
  };
  const logFields = { ...fields, conversation: encodeConversationKey(address) };
  const name = await within(
    dependencies.userName(event.tenantKey, event.operatorOpenId),
    nameWithinMilliseconds,
  );
  const user: ChatUser =
    typeof name === 'string' ? { id: event.operatorOpenId, name } : { id: event.operatorOpenId };
  const stopping = intake.stop({ address, user, ...(value.direct ? { isDirect: true } : {}) });
  try {
    const result = await within(stopping, dependencies.answerWithinMilliseconds - nameWithinMilliseconds);
    if (result !== pending) {
      logger.info({ ...logFields, result }, 'Feishu Stop click');
      return result === 'stopping'
        ? stoppingToast
        : { toast: { type: 'info', content: 'Nothing is running.' } };
    }
  } catch (error) {
    logger.error({ ...logFields, err: error }, 'Feishu stop request failed');
    return { toast: { type: 'error', content: 'Butler could not stop it. Please try again.' } };
  }
  logger.warn(logFields, 'Feishu stop request is slow; answering before the 3 s deadline');
  stopping
    .then((result) => logger.info({ ...logFields, result }, 'Feishu Stop click'))
    .catch((error: unknown) => logger.error({ ...logFields, err: error }, 'Feishu stop request failed'));
  return stoppingToast;
}
