import type { ButlerIntake } from '../../core/adapter.js';
import type { ApprovalCard } from '../../core/approval-card.js';
import type { DecisionResult } from '../../core/approvals/decision.js';
import type { Logger } from '../../core/logger.js';
import { type ApprovalButtonValue, renderApprovalCard } from './approval-card.js';
import type { CardActionEvent } from './event-payloads.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';

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
  /** Feishu drops answers after 3 s; answer with a holding toast before then. */
  answerWithinMilliseconds: number;
  /** A decision that finished after the answer went out still has to show on the card. */
  updateCardLater: (messageId: string, card: ApprovalCard) => Promise<void>;
}

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
  const decision = record?.decision;
  if (!approvalId || (decision !== 'approve' && decision !== 'reject')) return undefined;
  return { approval_id: approvalId, decision };
}

function rawCard(card: ApprovalCard): RawCard {
  return { type: 'raw', data: renderApprovalCard(card) };
}

export function decisionResponse(result: DecisionResult): CardActionResponse {
  if (result.ok) {
    const content =
      result.card.status === 'approved'
        ? 'Approved. Butler is running it now.'
        : 'Rejected. Nothing will run.';
    return { toast: { type: 'success', content }, card: rawCard(result.card) };
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
  const fields = { approvalId: value.approval_id, eventId: event.eventId, user: event.operatorOpenId };
  const decision = intake.decide({
    approvalId: value.approval_id,
    platform: 'feishu',
    user: { id: event.operatorOpenId },
    decision: value.decision,
  });
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
      return decisionResponse(result);
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
