import {
  type ApprovalCard,
  cardArgumentsLimit,
  outcomeLine,
  truncateText,
} from '../../core/approval-card.js';
import type { ChatUser, Decision } from '../../core/events.js';
import type { JsonRecord } from './fields.js';

/** Renders the core's neutral approval card as Feishu card JSON 2.0 (buttons only while pending). */

export interface ApprovalButtonValue {
  approval_id: string;
  decision: Decision;
}

const summaryLimit = 1000;
const shownApprovers = 20;

const pendingTemplate = { low: 'blue', medium: 'orange', high: 'red' } as const;
const decidedTemplate = { approved: 'green', rejected: 'grey', expired: 'grey' } as const;
const titles = {
  pending: 'Approval needed',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
} as const;

function plainText(content: string): JsonRecord {
  return { tag: 'plain_text', content };
}

/**
 * Escapes text for the markdown element with the numeric entities the card markdown documents, so names and
 * reasons cannot inject card tags (`<at id=all>`) or stray emphasis.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[<>*_~`[\]]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** `<at>` renders the user's current name; fall back to the escaped id when it is not an open_id. */
function userMarkdown(user: ChatUser): string {
  if (user.name) return escapeMarkdown(user.name);
  return /^[A-Za-z0-9_-]+$/.test(user.id) ? `<at id=${user.id}></at>` : escapeMarkdown(user.id);
}

function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function button(card: ApprovalCard, decision: Decision): JsonRecord {
  const value: ApprovalButtonValue = { approval_id: card.approvalId, decision };
  const approve = decision === 'approve';
  return {
    tag: 'button',
    element_id: approve ? 'approve' : 'reject',
    type: approve ? 'primary_filled' : 'danger',
    text: plainText(approve ? 'Approve' : 'Reject'),
    behaviors: [{ type: 'callback', value }],
    ...(approve && card.risk === 'high'
      ? {
          confirm: {
            title: plainText(`Run ${card.toolName}?`),
            text: plainText(truncateText(`High-risk action: ${card.summary}`, 300)),
          },
        }
      : {}),
  };
}

function detailsMarkdown(card: ApprovalCard): string {
  const approvers = card.approverIds.slice(0, shownApprovers).map((id) => userMarkdown({ id }));
  const lines = [
    `**Tool:** \`${card.toolName.replace(/`/g, "'")}\``,
    `**Requested by:** ${userMarkdown(card.requester)}`,
    `**Who may approve:** ${escapeMarkdown(card.whoMayApprove)}${approvers.length > 0 ? ` (${approvers.join(' ')})` : ''}`,
  ];
  if (card.status === 'pending') lines.push(`**Expires:** ${formatTime(card.expiresAt)}`);
  return lines.join('\n');
}

function argumentsMarkdown(card: ApprovalCard): string {
  // Break every run of backticks so the arguments cannot close the code block.
  const text = truncateText(card.argumentsJson, cardArgumentsLimit).replace(/`(?=`)/g, '`\u200b');
  return `**Arguments**\n\`\`\`json\n${text}\n\`\`\``;
}

export function renderApprovalCard(card: ApprovalCard): JsonRecord {
  const title = `${titles[card.status]}: ${card.toolName}`;
  const outcome =
    card.status === 'pending'
      ? undefined
      : outcomeLine({
          ...card,
          ...(card.decidedBy
            ? { decidedBy: { id: card.decidedBy.id, name: userMarkdown(card.decidedBy) } }
            : {}),
          ...(card.reason ? { reason: escapeMarkdown(card.reason) } : {}),
        });
  const elements: JsonRecord[] = [
    { tag: 'div', text: plainText(truncateText(card.summary, summaryLimit)) },
    { tag: 'markdown', content: argumentsMarkdown(card) },
    { tag: 'markdown', content: detailsMarkdown(card) },
  ];
  if (outcome) {
    elements.push({ tag: 'hr' }, { tag: 'markdown', element_id: 'outcome', content: `**${outcome}**` });
  } else {
    elements.push({
      tag: 'column_set',
      flex_mode: 'none',
      horizontal_spacing: '8px',
      columns: [
        { tag: 'column', width: 'auto', elements: [button(card, 'approve')] },
        { tag: 'column', width: 'auto', elements: [button(card, 'reject')] },
      ],
    });
  }
  return {
    schema: '2.0',
    config: { update_multi: true, summary: { content: title } },
    header: {
      title: plainText(title),
      subtitle: plainText(`${card.risk} risk`),
      template: card.status === 'pending' ? pendingTemplate[card.risk] : decidedTemplate[card.status],
    },
    body: { elements },
  };
}
