import type { ButlerIntake } from '../../core/adapter.js';
import { type ApprovalCard, type Decision, pendingCalls, utcDateTime } from '../../core/approval-card.js';
import type { DecisionResult } from '../../core/approvals/decision.js';
import type { ApprovalDecisionInput } from '../../core/events.js';
import type { Logger } from '../../core/logger.js';
import { type ApprovalButtonValue, renderApprovalCard } from './approval-card.js';
import type { CardActionEvent } from './event-payloads.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';
import { maxTimestampSkewSeconds } from './verify.js';

/** The synchronous answer to `card.action.trigger`: a toast and, optionally, the card that replaces the clicked one. */
export interface CardActionResponse {
  toast?: { type: 'success' | 'info' | 'warning' | 'error'; content: string };
  card?: RawCard;
}

interface RawCard {
  type: 'raw';
  data: JsonRecord;
}

export interface CardActionDependencies {
  intake: ButlerIntake;
  logger: Logger;
  now: () => number;
  /** Feishu drops answers after 3 s; answer with a holding toast before then. */
  answerWithinMilliseconds: number;
  /** A decision that finished after the answer went out still has to show on the card. */
  updateCardLater: (messageId: string, card: ApprovalCard) => Promise<void>;
}

function isDecision(value: unknown): value is Decision {
  return value === 'approve' || value === 'reject' || value === 'approve_for_conversation';
}

/** A button value our cards send: a call's id, or the card's batch id for "Approve all" / "Reject all". */
export function parseButtonValue(value: unknown): ApprovalButtonValue | undefined {
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

function rawCard(card: ApprovalCard): RawCard {
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

const pending = Symbol('pending');

export async function handleCardAction(
  event: CardActionEvent,
  dependencies: CardActionDependencies,
): Promise<CardActionResponse> {
  const { intake, logger } = dependencies;
  const value = parseButtonValue(event.value);
  if (!value) {
    logger.warn(
      { eventId: event.eventId, messageId: event.openMessageId },
      'Feishu card action without an approval value',
    );
    return { toast: { type: 'error', content: 'This button is not one Butler understands.' } };
  }
  const fields = {
    ...('batch_id' in value ? { batchId: value.batch_id } : { approvalId: value.approval_id }),
    decision: value.decision,
    eventId: event.eventId,
    user: event.operatorOpenId,
  };
  // Feishu never re-pushes a callback, so an old one is a replay (the signature, when there is one, is
  // checked for freshness too; the long connection has none).
  const age = dependencies.now() - event.createTime;
  if (!(Math.abs(age) <= maxTimestampSkewSeconds * 1000)) {
    logger.warn({ ...fields, ageMilliseconds: age }, 'Feishu card action outside the replay window refused');
    return { toast: { type: 'error', content: 'This click is too old to count. Please click again.' } };
  }
  const decision = intake.decide(decisionInput(value, event));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof pending>((resolve) => {
    timer = setTimeout(() => resolve(pending), dependencies.answerWithinMilliseconds);
  });
  try {
    const result = await Promise.race([decision, deadline]);
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
  } finally {
    clearTimeout(timer);
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
