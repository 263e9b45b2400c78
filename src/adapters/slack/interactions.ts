import type { ChatUser, Decision } from '../../core/contracts/events.js';
import {
  approveActionId,
  approveAllActionId,
  approveForConversationActionId,
  type DecisionTarget,
  type RejectReasonContext,
  rejectActionId,
  rejectAllActionId,
  rejectReasonBlockId,
  rejectReasonInputId,
  showArgumentsActionId,
  showBatchArgumentsActionId,
} from './approval-blocks.js';
import { homeApproveActionId, homeCallbackId, homeRejectActionId } from './home-view.js';
import { isRecord } from './parse.js';

/** Interactivity payloads (block_actions, view_submission) → what the click means. Pure functions. */

/** What each card button asks for, and whether its value is one call's approvalId or the card's batchId. */
const buttonMeanings: Record<string, { decision: Decision; scope: 'call' | 'batch' }> = {
  [approveActionId]: { decision: 'approve', scope: 'call' },
  [rejectActionId]: { decision: 'reject', scope: 'call' },
  [approveForConversationActionId]: { decision: 'approve_for_conversation', scope: 'call' },
  [approveAllActionId]: { decision: 'approve', scope: 'batch' },
  [rejectAllActionId]: { decision: 'reject', scope: 'batch' },
};

/** Every action id on an approval card: the Bolt app routes each of them to the click handler. */
export const cardActionIds = Object.keys(buttonMeanings);

/** Where a click happened and who clicked. */
interface ClickContext {
  /** From Slack's signed payload: the only authority on who clicked. */
  user: ChatUser;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  triggerId: string | undefined;
}

/** A click on a card: `approvalId` for one call, `batchId` for "Approve all" / "Reject all". */
export type CardClick = DecisionTarget & ClickContext & { decision: Decision };

/** "Show all arguments": of one call (`approvalId`) or of every call of the card (`batchId`). */
export type ShowArgumentsClick = DecisionTarget & ClickContext;

/** The "Show all arguments" buttons and what their value names. */
const showScopes: Record<string, 'call' | 'batch'> = {
  [showArgumentsActionId]: 'call',
  [showBatchArgumentsActionId]: 'batch',
};

export const showArgumentsActionIds = Object.keys(showScopes);

export interface RejectSubmission {
  context: RejectReasonContext;
  user: ChatUser;
  reason: string | undefined;
}

function field(record: unknown, key: string): string | undefined {
  if (!isRecord(record)) return undefined;
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function clickingUser(body: Record<string, unknown>): ChatUser | undefined {
  const id = field(body.user, 'id');
  if (!id) return undefined;
  const name = field(body.user, 'name') ?? field(body.user, 'username');
  return name ? { id, name } : { id };
}

const meaningOf = (actionId: unknown) =>
  typeof actionId === 'string' && Object.hasOwn(buttonMeanings, actionId)
    ? buttonMeanings[actionId]
    : undefined;

/** The first action of a block_actions payload that `known` accepts, its value, and where it happened. */
function findClick(
  body: unknown,
  known: (actionId: string) => boolean,
): { actionId: string; value: string; context: ClickContext } | undefined {
  if (!isRecord(body) || body.type !== 'block_actions' || !Array.isArray(body.actions)) return undefined;
  const action = body.actions.find(
    (candidate) =>
      isRecord(candidate) && typeof candidate.action_id === 'string' && known(candidate.action_id),
  );
  const actionId = field(action, 'action_id');
  const value = field(action, 'value');
  const user = clickingUser(body);
  if (!actionId || !value || !user) return undefined;
  const container = body.container;
  const message = body.message;
  return {
    actionId,
    value,
    context: {
      user,
      channel: field(container, 'channel_id') ?? field(body.channel, 'id'),
      messageTs: field(container, 'message_ts') ?? field(message, 'ts'),
      threadTs: field(container, 'thread_ts') ?? field(message, 'thread_ts'),
      triggerId: field(body, 'trigger_id'),
    },
  };
}

export function parseCardClick(body: unknown): CardClick | undefined {
  const click = findClick(body, (actionId) => meaningOf(actionId) !== undefined);
  const meaning = meaningOf(click?.actionId);
  if (!click || !meaning) return undefined;
  return {
    ...(meaning.scope === 'batch' ? { batchId: click.value } : { approvalId: click.value }),
    decision: meaning.decision,
    ...click.context,
  };
}

export function parseShowArgumentsClick(body: unknown): ShowArgumentsClick | undefined {
  const click = findClick(body, (actionId) => Object.hasOwn(showScopes, actionId));
  if (!click) return undefined;
  return {
    ...(showScopes[click.actionId] === 'batch' ? { batchId: click.value } : { approvalId: click.value }),
    ...click.context,
  };
}

const homeDecisions: Record<string, 'approve' | 'reject'> = {
  [homeApproveActionId]: 'approve',
  [homeRejectActionId]: 'reject',
};

/** The App Home's Approve / Reject buttons: the Bolt app routes each of them to the home click handler. */
export const homeActionIds = Object.keys(homeDecisions);

/** A decision taken on the clicker's own App Home tab: one call, by who Slack says clicked. */
export interface HomeClick {
  approvalId: string;
  decision: 'approve' | 'reject';
  user: ChatUser;
}

/**
 * A home tab button, read only from a home view Butler published (its callback id): the same action ids in a
 * message, or in any other view, decide nothing.
 */
export function parseHomeClick(body: unknown): HomeClick | undefined {
  if (!isRecord(body) || field(body.container, 'type') !== 'view') return undefined;
  if (field(body.view, 'type') !== 'home' || field(body.view, 'callback_id') !== homeCallbackId)
    return undefined;
  const click = findClick(body, (actionId) => Object.hasOwn(homeDecisions, actionId));
  const decision = click ? homeDecisions[click.actionId] : undefined;
  if (!click || !decision) return undefined;
  return { approvalId: click.value, decision, user: click.context.user };
}

function parseContext(metadata: string | undefined): RejectReasonContext | undefined {
  if (!metadata) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  const approvalId = field(value, 'approvalId');
  const batchId = field(value, 'batchId');
  const channel = field(value, 'channel');
  const messageTs = field(value, 'messageTs');
  if (!channel || !messageTs) return undefined;
  // Exactly one target: a modal that named both (or neither) was not opened by Butler.
  let target: DecisionTarget;
  if (approvalId && !batchId) target = { approvalId };
  else if (batchId && !approvalId) target = { batchId };
  else return undefined;
  const threadTs = field(value, 'threadTs');
  return { ...target, channel, messageTs, ...(threadTs ? { threadTs } : {}) };
}

export function parseRejectSubmission(body: unknown): RejectSubmission | undefined {
  if (!isRecord(body) || body.type !== 'view_submission' || !isRecord(body.view)) return undefined;
  const context = parseContext(field(body.view, 'private_metadata'));
  const user = clickingUser(body);
  if (!context || !user) return undefined;
  const values = isRecord(body.view.state) ? body.view.state.values : undefined;
  const block = isRecord(values) ? values[rejectReasonBlockId] : undefined;
  const input = isRecord(block) ? block[rejectReasonInputId] : undefined;
  const reason = field(input, 'value')?.trim();
  return { context, user, reason: reason || undefined };
}
