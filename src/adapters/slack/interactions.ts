import type { ChatUser, Decision } from '../../core/events.js';
import {
  approveActionId,
  type RejectReasonContext,
  rejectActionId,
  rejectReasonBlockId,
  rejectReasonInputId,
} from './approval-blocks.js';
import { isRecord } from './parse.js';

/** Interactivity payloads (block_actions, view_submission) → what the click means. Pure functions. */

export interface CardClick {
  approvalId: string;
  decision: Decision;
  /** From Slack's signed payload: the only authority on who clicked. */
  user: ChatUser;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  triggerId: string | undefined;
}

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

export function parseCardClick(body: unknown): CardClick | undefined {
  if (!isRecord(body) || body.type !== 'block_actions' || !Array.isArray(body.actions)) return undefined;
  const action = body.actions.find(
    (candidate) =>
      isRecord(candidate) &&
      (candidate.action_id === approveActionId || candidate.action_id === rejectActionId),
  );
  const approvalId = field(action, 'value');
  const user = clickingUser(body);
  if (!isRecord(action) || !approvalId || !user) return undefined;
  const container = body.container;
  const message = body.message;
  return {
    approvalId,
    decision: action.action_id === approveActionId ? 'approve' : 'reject',
    user,
    channel: field(container, 'channel_id') ?? field(body.channel, 'id'),
    messageTs: field(container, 'message_ts') ?? field(message, 'ts'),
    threadTs: field(container, 'thread_ts') ?? field(message, 'thread_ts'),
    triggerId: field(body, 'trigger_id'),
  };
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
  const channel = field(value, 'channel');
  const messageTs = field(value, 'messageTs');
  if (!approvalId || !channel || !messageTs) return undefined;
  const threadTs = field(value, 'threadTs');
  return threadTs ? { approvalId, channel, messageTs, threadTs } : { approvalId, channel, messageTs };
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
