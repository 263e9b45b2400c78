import { type ApprovalCard, outcomeLine, truncateText } from '../../core/approval-card.js';
import { escapeMrkdwn } from './mrkdwn.js';

/** Block Kit for approval cards and the reject-reason modal. Pure: the core's neutral card in, JSON out. */

export const approveActionId = 'butler_approve';
export const rejectActionId = 'butler_reject';
export const rejectReasonCallbackId = 'butler_reject_reason';
export const rejectReasonBlockId = 'reason';
export const rejectReasonInputId = 'reason_input';

/** Block Kit limits (docs.slack.dev block reference; @slack/types). */
export const blockLimits = {
  sectionText: 3000,
  field: 2000,
  buttonText: 75,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  notificationText: 300,
  modalTitle: 24,
  privateMetadata: 3000,
  inputMaxLength: 500,
} as const;

export type SlackBlock = Record<string, unknown>;

export interface RenderedMessage {
  /** Notification / accessibility fallback. */
  text: string;
  blocks: SlackBlock[];
}

const plain = (text: string, limit: number) => ({
  type: 'plain_text',
  text: truncateText(text, limit),
  emoji: true,
});
const mrkdwn = (text: string, limit: number) => ({ type: 'mrkdwn', text: truncateText(text, limit) });
const section = (text: string): SlackBlock => ({
  type: 'section',
  text: mrkdwn(text, blockLimits.sectionText),
});

/** Slack renders `<!date^…>` in the reader's time zone; the fallback is UTC. */
function slackDate(date: Date): string {
  const unix = Math.floor(date.getTime() / 1000);
  const fallback = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${unix}^{date_short_pretty} {time}|${fallback}>`;
}

function codeBlock(json: string): string {
  // Backtick runs would close the block early; a zero-width space keeps them visible but inert.
  const body = escapeMrkdwn(json || '{}').replace(/```/g, '`\u200b``');
  const room = blockLimits.sectionText - '```\n\n```'.length;
  return `\`\`\`\n${truncateText(body, room)}\n\`\`\``;
}

const riskLabels: Record<ApprovalCard['risk'], string> = {
  low: 'Low',
  medium: 'Medium',
  high: ':warning: High',
};

const outcomeIcons: Record<ApprovalCard['status'], string> = {
  pending: '',
  approved: ':white_check_mark:',
  rejected: ':no_entry_sign:',
  expired: ':hourglass:',
};

function whoMayApprove(card: ApprovalCard): string {
  const approvers = card.approverIds.slice(0, 20).map((id) => `<@${id}>`);
  const more =
    card.approverIds.length > approvers.length
      ? ` and ${card.approverIds.length - approvers.length} more`
      : '';
  const list = approvers.length > 0 ? `\n${approvers.join(', ')}${more}` : '';
  return `*Who may approve:*\n${escapeMrkdwn(card.whoMayApprove)}${list}`;
}

function approvalButtons(card: ApprovalCard): SlackBlock {
  const approve: SlackBlock = {
    type: 'button',
    action_id: approveActionId,
    text: plain('Approve', blockLimits.buttonText),
    style: 'primary',
    value: card.approvalId,
  };
  if (card.risk === 'high') {
    approve.confirm = {
      title: plain('Approve a high-risk action?', blockLimits.confirmTitle),
      text: mrkdwn(
        `Butler will run \`${card.toolName}\`: ${escapeMrkdwn(card.summary)}`,
        blockLimits.confirmText,
      ),
      confirm: plain('Approve', blockLimits.confirmButton),
      deny: plain('Cancel', blockLimits.confirmButton),
      style: 'primary',
    };
  }
  const reject: SlackBlock = {
    type: 'button',
    action_id: rejectActionId,
    text: plain('Reject', blockLimits.buttonText),
    style: 'danger',
    value: card.approvalId,
  };
  return { type: 'actions', block_id: 'butler_approval', elements: [approve, reject] };
}

export function renderApprovalCard(card: ApprovalCard): RenderedMessage {
  const pending = card.status === 'pending';
  const headline = pending
    ? `:lock: *Approval needed:* \`${card.toolName}\``
    : `*Tool call:* \`${card.toolName}\``;
  const blocks: SlackBlock[] = [
    section(`${headline}\n${escapeMrkdwn(card.summary)}`),
    section(codeBlock(card.argumentsJson)),
    {
      type: 'section',
      fields: [
        mrkdwn(`*Risk:*\n${riskLabels[card.risk]}`, blockLimits.field),
        mrkdwn(`*Requested by:*\n<@${card.requester.id}>`, blockLimits.field),
        mrkdwn(whoMayApprove(card), blockLimits.field),
        mrkdwn(`*${pending ? 'Expires' : 'Expiry'}:*\n${slackDate(card.expiresAt)}`, blockLimits.field),
      ],
    },
  ];
  const outcome = outcomeLine(card);
  if (pending) {
    blocks.push(approvalButtons(card));
  } else if (outcome) {
    blocks.push(section(`${outcomeIcons[card.status]} *${escapeMrkdwn(outcome)}*`));
  }
  const text = pending
    ? `Approval needed: ${card.toolName}: ${card.summary}`
    : `${card.toolName}: ${outcome ?? card.status}`;
  return { text: truncateText(text, blockLimits.notificationText), blocks };
}

/** Where a reject-reason modal's submission must land: carried in the view's private_metadata. */
export interface RejectReasonContext {
  approvalId: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
}

export function renderRejectReasonView(context: RejectReasonContext): Record<string, unknown> {
  return {
    type: 'modal',
    callback_id: rejectReasonCallbackId,
    private_metadata: JSON.stringify(context),
    title: plain('Reject tool call', blockLimits.modalTitle),
    submit: plain('Reject', blockLimits.modalTitle),
    close: plain('Cancel', blockLimits.modalTitle),
    blocks: [
      section('Butler will not run this tool call. You may tell the requester why.'),
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
