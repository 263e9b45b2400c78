import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { DecisionResult } from '../../core/contracts/approval-card.js';
import {
  type ApprovalCard,
  type ApprovalDetails,
  type Decision,
  pendingCalls,
  utcDateTime,
} from '../../core/contracts/approval-card.js';
import type { ApprovalDecisionInput } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import {
  type ApprovalButtonValue,
  type CardButtonValue,
  renderApprovalCard,
  type ShowArgumentsValue,
} from './approval-card.js';
import type { CardActionEvent, CardActionResponse } from './event-payloads.js';
import { type FeedbackButtonValue, parseFeedbackValue } from './feedback-buttons.js';
import { asRecord, stringField } from './fields.js';
import { answerInputCard } from './input-card-action.js';
import { parseInputButton } from './input-form-card.js';
import { maxTimestampSkewSeconds } from './verify.js';

export type { CardActionResponse } from './event-payloads.js';

export interface CardActionDependencies {
  intake: ButlerIntake;
  logger: Logger;
  now: () => number;
  /** Feishu drops answers after 3 s; answer with a holding toast before then. */
  answerWithinMilliseconds: number;
  /** A decision that finished after the answer went out still has to show on the card. */
  updateCardLater: (messageId: string, card: ApprovalCard) => Promise<void>;
  /** Posts a request's whole arguments where it was asked ("Show all arguments"), after the answer. */
  sendArguments: (details: ApprovalDetails, cardMessageId: string) => Promise<number>;
}

function isDecision(value: unknown): value is Decision {
  return value === 'approve' || value === 'reject' || value === 'approve_for_conversation';
}

/**
 * A button value our cards send: a call's id, or the card's batch id for "Approve all" / "Reject all", and a
 * decision; or the call or batch whose arguments to show.
 */
export function parseButtonValue(value: unknown): CardButtonValue | undefined {
  let record = asRecord(value);
  if (!record && typeof value === 'string') {
    try {
      record = asRecord(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  const approvalId = stringField(record, 'approval_id');
  const batchId = stringField(record, 'batch_id');
  const decision = record?.decision;
  const showCall = stringField(record, 'show_arguments');
  const showBatch = stringField(record, 'show_arguments_batch');
  // A value naming more than one thing is not one our cards send.
  if (showCall || showBatch) {
    if (approvalId || batchId || decision !== undefined || (showCall && showBatch)) return undefined;
    return showCall ? { show_arguments: showCall } : { show_arguments_batch: showBatch ?? '' };
  }
  // Our cards never send both ids: refuse such a value rather than guess which one was meant.
  if (approvalId && !batchId && isDecision(decision)) return { approval_id: approvalId, decision };
  if (batchId && !approvalId && (decision === 'approve' || decision === 'reject'))
    return { batch_id: batchId, decision };
  return undefined;
}

function decisionInput(value: ApprovalButtonValue, event: CardActionEvent): ApprovalDecisionInput {
  const common = {
    platform: 'feishu',
    user: { id: event.operatorOpenId },
    // The click decides only the card it is on; without a message to compare, nothing.
    cardMessageId: event.openMessageId ?? '',
  } as const;
  return 'batch_id' in value
    ? { ...common, batchId: value.batch_id, decision: value.decision }
    : { ...common, approvalId: value.approval_id, decision: value.decision };
}

function rawCard(card: ApprovalCard): NonNullable<CardActionResponse['card']> {
  return { type: 'raw', data: renderApprovalCard(card) };
}

/** "26 Nov 2026, 02:00 (Asia/Shanghai)": a time in the clicker's own zone, or UTC when it is unknown. */
function inZone(date: Date, timezone: string | undefined): string {
  if (!timezone) return utcDateTime(date);
  try {
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      dateStyle: 'medium',
      timeStyle: 'short',
    });
    return `${local.format(date)} (${timezone})`;
  } catch {
    return utcDateTime(date);
  }
}

/** What the click did, then what happens next: the turn goes on only once every call on the card is decided. */
function successText(card: ApprovalCard, value: ApprovalButtonValue, timezone: string | undefined): string {
  let done: string;
  if ('batch_id' in value) {
    done = value.decision === 'approve' ? 'Approved all.' : 'Rejected all.';
  } else if (value.decision === 'approve_for_conversation') {
    const until = card.calls.find((call) => call.approvalId === value.approval_id)?.standingUntil;
    done = `Approved for this conversation${until ? ` until ${inZone(until, timezone)}` : ''}.`;
  } else {
    done = value.decision === 'approve' ? 'Approved.' : 'Rejected.';
  }
  const waiting = pendingCalls(card).length;
  const approved = card.calls.filter((call) => call.status === 'approved').length;
  let next: string;
  if (waiting > 0)
    next =
      waiting === 1
        ? 'Butler goes on once the last call is decided.'
        : `Butler goes on once the other ${waiting} calls are decided.`;
  else if (approved === 0) next = 'Nothing will run.';
  else if (card.calls.length === 1) next = 'Butler is running it now.';
  else next = `Butler is running the ${approved === 1 ? 'approved call' : `${approved} approved calls`} now.`;
  return `${done} ${next}`;
}

export function decisionResponse(
  result: DecisionResult,
  value: ApprovalButtonValue,
  timezone?: string,
): CardActionResponse {
  if (result.ok) {
    // The core explains when a click could not do all it asked (Approve all with calls the clicker may not decide).
    const toast = result.message
      ? ({ type: 'info', content: result.message } as const)
      : ({ type: 'success', content: successText(result.card, value, timezone) } as const);
    return { toast, card: rawCard(result.card) };
  }
  if (result.code === 'not_authorized' || result.code === 'not_found') {
    // The card stays as it is, buttons included, for someone who may decide.
    return { toast: { type: 'error', content: result.message } };
  }
  return {
    toast: { type: result.code === 'expired' ? 'warning' : 'info', content: result.message },
    ...(result.card ? { card: rawCard(result.card) } : {}),
  };
}

/** Log fields naming what a click is about. */
function targetFields(value: CardButtonValue): Record<string, unknown> {
  if ('show_arguments' in value) return { approvalId: value.show_arguments, action: 'show_arguments' };
  if ('show_arguments_batch' in value)
    return { batchId: value.show_arguments_batch, action: 'show_arguments' };
  return {
    ...('batch_id' in value ? { batchId: value.batch_id } : { approvalId: value.approval_id }),
    decision: value.decision,
  };
}

export const pending = Symbol('pending');

/** `work`'s result, or `pending` once `milliseconds` passed (the work goes on). */
export async function within<T>(work: Promise<T>, milliseconds: number): Promise<T | typeof pending> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof pending>((resolve) => {
    timer = setTimeout(() => resolve(pending), milliseconds);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const isShowArguments = (value: CardButtonValue): value is ShowArgumentsValue =>
  'show_arguments' in value || 'show_arguments_batch' in value;

/**
 * "Show all arguments": reads the request's calls from the database (never from the click) and posts their
 * whole arguments below the card, after the answer; nothing is decided.
 */
async function showArguments(
  value: ShowArgumentsValue,
  event: CardActionEvent,
  dependencies: CardActionDependencies,
  fields: Record<string, unknown>,
): Promise<CardActionResponse> {
  const { logger } = dependencies;
  const cardMessageId = event.openMessageId ?? '';
  const reading = dependencies.intake.approvalDetails({
    ...('show_arguments' in value
      ? { approvalId: value.show_arguments }
      : { batchId: value.show_arguments_batch }),
    platform: 'feishu',
    // Only the card the button is on; without a message to compare, nothing.
    cardMessageId,
  });
  const send = async (details: ApprovalDetails | undefined) => {
    if (!details) return;
    const messages = await dependencies.sendArguments(details, cardMessageId);
    logger.info({ ...fields, calls: details.calls.length, messages }, 'Feishu arguments shown');
  };
  try {
    const details = await within(reading, dependencies.answerWithinMilliseconds);
    if (details === undefined)
      return { toast: { type: 'error', content: 'This approval request no longer exists.' } };
    if (details !== pending) {
      send(details).catch((error: unknown) =>
        logger.error({ ...fields, err: error }, 'Feishu arguments could not be sent'),
      );
      const calls = details.calls.length === 1 ? 'the call' : `all ${details.calls.length} calls`;
      return { toast: { type: 'info', content: `Sending the whole arguments of ${calls} below the card.` } };
    }
  } catch (error) {
    logger.error({ ...fields, err: error }, 'Feishu arguments could not be read');
    return { toast: { type: 'error', content: 'Butler could not read the arguments. Please try again.' } };
  }
  reading
    .then(send)
    .catch((error: unknown) => logger.error({ ...fields, err: error }, 'Feishu arguments could not be sent'));
  return { toast: { type: 'info', content: 'Butler is reading the arguments; they follow below the card.' } };
}

/**
 * Feishu never re-pushes a callback, so an old one is a replay (the signature, when there is one, is checked
 * for freshness too; the long connection has none): the answer that refuses it, or undefined.
 */
export function refuseReplay(
  event: CardActionEvent,
  dependencies: Pick<CardActionDependencies, 'logger' | 'now'>,
  fields: Record<string, unknown>,
): CardActionResponse | undefined {
  const age = dependencies.now() - event.createTime;
  if (Math.abs(age) <= maxTimestampSkewSeconds * 1000) return undefined;
  dependencies.logger.warn(
    { ...fields, ageMilliseconds: age },
    'Feishu card action outside the replay window refused',
  );
  return { toast: { type: 'error', content: 'This click is too old to count. Please click again.' } };
}

/** 👍 / 👎 under a reply: stored (or changed) for the clicker, who alone sees the toast. */
async function recordFeedback(
  value: FeedbackButtonValue,
  event: CardActionEvent,
  dependencies: CardActionDependencies,
): Promise<CardActionResponse> {
  const fields = { eventId: event.eventId, user: event.operatorOpenId, rating: value.feedback };
  if (!event.openMessageId || !event.openChatId)
    return { toast: { type: 'error', content: 'This button is not one Butler understands.' } };
  try {
    const result = await dependencies.intake.recordFeedback({
      platform: 'feishu',
      user: { id: event.operatorOpenId },
      reply: { channel: event.openChatId, messageId: event.openMessageId },
      rating: value.feedback,
    });
    dependencies.logger.info({ ...fields, ok: result.ok }, 'Feishu feedback click');
    return { toast: { type: result.ok ? 'success' : 'info', content: result.message } };
  } catch (error) {
    dependencies.logger.error({ ...fields, err: error }, 'Feishu feedback could not be recorded');
    return { toast: { type: 'error', content: 'Butler could not record your feedback. Please try again.' } };
  }
}

export async function handleCardAction(
  event: CardActionEvent,
  dependencies: CardActionDependencies,
): Promise<CardActionResponse> {
  const { intake, logger } = dependencies;
  const question = parseInputButton(event.value);
  if (question) {
    const replayed = refuseReplay(event, dependencies, {
      eventId: event.eventId,
      inputId: question.input_id,
    });
    return replayed ?? answerInputCard(question, event, dependencies);
  }
  const feedback = parseFeedbackValue(event.value);
  if (feedback) return recordFeedback(feedback, event, dependencies);
  const value = parseButtonValue(event.value);
  if (!value) {
    logger.warn(
      { eventId: event.eventId, messageId: event.openMessageId },
      'Feishu card action without an approval value',
    );
    return { toast: { type: 'error', content: 'This button is not one Butler understands.' } };
  }
  const fields = {
    ...targetFields(value),
    eventId: event.eventId,
    user: event.operatorOpenId,
  };
  const replayed = refuseReplay(event, dependencies, fields);
  if (replayed) return replayed;
  if (isShowArguments(value)) return showArguments(value, event, dependencies, fields);
  const decision = intake.decide(decisionInput(value, event));
  try {
    const result = await within(decision, dependencies.answerWithinMilliseconds);
    if (result !== pending) {
      logger.info(
        { ...fields, ok: result.ok, code: result.ok ? undefined : result.code },
        'Feishu approval click',
      );
      return decisionResponse(result, value, event.timezone);
    }
  } catch (error) {
    logger.error({ ...fields, err: error }, 'Feishu approval decision failed');
    return { toast: { type: 'error', content: 'Butler could not record that decision. Please try again.' } };
  }
  logger.warn(fields, 'Feishu approval decision is slow; answering before the 3 s deadline');
  decision
    .then(async (result) => {
      if (result.ok && event.openMessageId)
        await dependencies.updateCardLater(event.openMessageId, result.card);
    })
    .catch((error: unknown) => logger.error({ ...fields, err: error }, 'Feishu approval decision failed'));
  // Not "received": it is not stored yet. The card changes once it is; if it never does, a second click decides.
  return {
    toast: {
      type: 'info',
      content:
        'Still recording your decision; the card changes once it is stored. If it does not, click again.',
    },
  };
}
