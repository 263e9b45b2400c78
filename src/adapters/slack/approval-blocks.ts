import { type ApprovalCard, type ApprovalCardCall, outcomeLine } from '../../core/contracts/approval-card.js';
import { argumentsCode } from './approval-arguments.js';
import { renderBatchCard } from './approval-batch-blocks.js';
import {
  agentLine,
  approverMentions,
  callActions,
  notificationText,
  outcomeIcons,
  outcomeMrkdwn,
  readingButtons,
  requesterMentions,
  riskLabels,
  toolHeading,
} from './approval-parts.js';
import {
  blockLimits,
  mrkdwn,
  plain,
  type RenderedMessage,
  type SlackBlock,
  section,
  slackDate,
} from './block-kit.js';
import { escapeMrkdwn } from './mrkdwn.js';

/**
 * Block Kit for approval cards and the reject-reason modal. Pure: the core's neutral card in, JSON out.
 * A card with one call looks as it always has; several calls of one model step share one card.
 */

export {
  approveActionId,
  approveAllActionId,
  approveForConversationActionId,
  openConsoleActionId,
  rejectActionId,
  rejectAllActionId,
  showArgumentsActionId,
  showBatchArgumentsActionId,
} from './approval-parts.js';
export { blockLimits, type RenderedMessage, type SlackBlock } from './block-kit.js';

export const rejectReasonCallbackId = 'butler_reject_reason';
export const rejectReasonBlockId = 'reason';
export const rejectReasonInputId = 'reason_input';

function whoMayApprove(card: ApprovalCard, call: ApprovalCardCall): string {
  const mentions = approverMentions(card.approverIds);
  return `*Who may approve:*\n${escapeMrkdwn(call.whoMayApprove)}${mentions ? `\n${mentions}` : ''}`;
}

function renderSingleCall(card: ApprovalCard, call: ApprovalCardCall): RenderedMessage {
  const pending = call.status === 'pending';
  const code = argumentsCode(call, blockLimits.sectionText);
  const reading = readingButtons(card, code?.cut === false ? undefined : { approvalId: call.approvalId });
  const headline = pending
    ? `:lock: *Approval needed:* ${toolHeading(call)}`
    : `*Tool call:* ${toolHeading(call)}`;
  const asked = agentLine(card, call);
  const blocks: SlackBlock[] = [
    section(headline),
    ...(asked ? [{ type: 'context', elements: [mrkdwn(asked, blockLimits.sectionText)] }] : []),
    // The summary is the tool's words: shown as they are, never as formatting.
    { type: 'section', text: plain(call.summary, blockLimits.sectionText) },
    ...(code ? [section(code.text)] : []),
    {
      type: 'section',
      fields: [
        mrkdwn(`*Risk:*\n${riskLabels[call.risk]}`, blockLimits.field),
        mrkdwn(`*Requested by:*\n${requesterMentions(card)}`, blockLimits.field),
        mrkdwn(whoMayApprove(card, call), blockLimits.field),
        mrkdwn(`*${pending ? 'Expires' : 'Expiry'}:*\n${slackDate(card.expiresAt)}`, blockLimits.field),
      ],
    },
  ];
  const outcome = outcomeMrkdwn(call, 1000);
  if (pending) {
    blocks.push(
      callActions(card, call, {
        blockId: 'butler_approval',
        confirmTextLimit: blockLimits.confirmText,
        extra: reading,
      }),
    );
  } else {
    if (outcome) blocks.push(section(`${outcomeIcons[call.status]} *${outcome}*`));
    // A decided card still shows what was decided on.
    if (reading.length > 0) blocks.push({ type: 'actions', block_id: 'butler_reading', elements: reading });
  }
  const name = `${call.toolName}${call.agent ? ` (asked by the ${call.agent} agent)` : ''}`;
  const text = pending
    ? `Approval needed: ${name}: ${call.summary}`
    : `${name}: ${outcomeLine(call) ?? call.status}`;
  return { text: notificationText(text), blocks };
}

export function renderApprovalCard(card: ApprovalCard): RenderedMessage {
  const [only, ...others] = card.calls;
  return only && others.length === 0 ? renderSingleCall(card, only) : renderBatchCard(card);
}

/** What a reject-reason modal decides: one call, or every pending call of a card ("Reject all"). */
export type DecisionTarget =
  | { approvalId: string; batchId?: undefined }
  | { batchId: string; approvalId?: undefined };

/**
 * Where a reject-reason modal's submission must land: carried in the view's private_metadata as flat JSON,
 * `{"approvalId"|"batchId", "channel", "messageTs", "threadTs"?}` (a modal opened before "Reject all"
 * existed still parses).
 */
export type RejectReasonContext = DecisionTarget & {
  channel: string;
  messageTs: string;
  threadTs?: string;
};

/** The modal, or undefined when its context would not fit private_metadata (never for Butler's own ids). */
export function renderRejectReasonView(context: RejectReasonContext): Record<string, unknown> | undefined {
  const metadata = JSON.stringify(context);
  if (metadata.length > blockLimits.privateMetadata) return undefined;
  const all = context.batchId !== undefined;
  return {
    type: 'modal',
    callback_id: rejectReasonCallbackId,
    private_metadata: metadata,
    title: plain(all ? 'Reject all tool calls' : 'Reject tool call', blockLimits.modalTitle),
    submit: plain(all ? 'Reject all' : 'Reject', blockLimits.modalTitle),
    close: plain('Cancel', blockLimits.modalTitle),
    blocks: [
      section(
        all
          ? 'Butler will not run any of the tool calls on this card still waiting for a decision. You may tell the requester why.'
          : 'Butler will not run this tool call. You may tell the requester why.',
      ),
      {
        type: 'input',
        block_id: rejectReasonBlockId,
        optional: true,
        label: plain('Reason (optional)', 2000),
        element: {
          type: 'plain_text_input',
          action_id: rejectReasonInputId,
          multiline: true,
          max_length: blockLimits.inputMaxLength,
        },
      },
    ],
  };
}
