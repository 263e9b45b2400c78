import {
  type ApprovalCard,
  type ApprovalCardCall,
  callsWithOwnButtons,
  cardArgumentsLimit,
  characters,
  pendingCalls,
  toolLabel,
  utcDateTime,
} from '../../core/contracts/approval-card.js';
import { truncateText } from '../../core/text/index.js';
import type { Risk } from '../../core/tools/tool.js';
import { batchButtons, buttonRow, callButtons, plainText, readingButtons } from './approval-buttons.js';
import {
  agentMarkdown,
  argumentsCut,
  argumentsMarkdown,
  askedByAgents,
  escapeMarkdown,
  outcomeMarkdown,
  requestersMarkdown,
  toolMarkdown,
  userMarkdown,
} from './approval-markdown.js';
import { cardBodyBudgetBytes, cardBodyBytes, maxTablesPerCard } from './card-limits.js';
import { type JsonRecord, recordField } from './fields.js';
import { tableCount } from './markdown-tables.js';

/**
 * Renders the core's neutral approval card as Feishu card JSON 2.0. One call looks like a single request;
 * several list every call with its own buttons plus "Approve all" / "Reject all". Buttons only while
 * something is pending.
 */

export type {
  ApprovalButtonValue,
  BatchDecision,
  CardButtonValue,
  ShowArgumentsValue,
} from './approval-buttons.js';

/** How much of each call the card shows; shrunk step by step until the card fits. */
interface Layout {
  summaryLimit: number;
  /** 0 leaves the arguments out. */
  argumentsLimit: number;
  /** Calls listed on a card of several; the rest are only counted. */
  shownCalls: number;
}

/** Calls listed in full; more would also risk the per-card element cap that is often cited (200). */
const shownCallsLimit = 50;
const summaryLimit = 1000;
const shownApprovers = 20;

const riskOrder: Record<Risk, number> = { low: 0, medium: 1, high: 2 };
const pendingTemplate = { low: 'blue', medium: 'orange', high: 'red' } as const;
const decidedTemplate = { approved: 'green', rejected: 'grey', expired: 'grey' } as const;
const titles = {
  pending: 'Approval needed',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
} as const;

function markdown(content: string): JsonRecord {
  return { tag: 'markdown', content };
}

function highestRisk(calls: readonly ApprovalCardCall[]): Risk {
  return calls.reduce<Risk>(
    (highest, call) => (riskOrder[call.risk] > riskOrder[highest] ? call.risk : highest),
    'low',
  );
}

/** Requester, who may approve (when the same for every call), deadline while pending. */
function detailsMarkdown(card: ApprovalCard, leading: string[], whoMayApprove: string | undefined): string {
  const approvers = card.approverIds.slice(0, shownApprovers).map((id) => userMarkdown({ id }));
  const mentions = approvers.length > 0 ? ` (${approvers.join(' ')})` : '';
  const lines = [...leading, `**Requested by:** ${requestersMarkdown(card.requesters)}`];
  if (whoMayApprove !== undefined)
    lines.push(`**Who may approve:** ${escapeMarkdown(whoMayApprove)}${mentions}`);
  else if (approvers.length > 0) lines.push(`**Approvers:** ${approvers.join(' ')}`);
  if (pendingCalls(card).length > 0) lines.push(`**Expires:** ${utcDateTime(card.expiresAt)}`);
  return lines.join('\n');
}

interface CardHeader {
  title: string;
  subtitle: string;
  template: string;
}

/** The summary is what chat lists and notifications show: the title, and which agents asked, if any. */
function cardShell(
  { title, subtitle, template }: CardHeader,
  calls: readonly ApprovalCardCall[],
  elements: JsonRecord[],
): JsonRecord {
  const asked = askedByAgents(calls);
  return {
    schema: '2.0',
    config: { update_multi: true, summary: { content: asked ? `${title} (${asked})` : title } },
    header: { title: plainText(title), subtitle: plainText(subtitle), template },
    body: { elements },
  };
}

function renderSingleCall(card: ApprovalCard, call: ApprovalCardCall, layout: Layout): JsonRecord {
  const title = `${titles[call.status]}: ${toolLabel(call)}`;
  const elements: JsonRecord[] = [
    { tag: 'div', text: plainText(truncateText(call.summary, layout.summaryLimit)) },
  ];
  if (layout.argumentsLimit > 0)
    elements.push(markdown(`**Arguments**\n${argumentsMarkdown(call, layout.argumentsLimit)}`));
  else
    elements.push(
      markdown(`*Arguments not shown (${characters(call.argumentsLength)}): the card has no room for them.*`),
    );
  const leading = [`**Tool:** ${toolMarkdown(call)}`, agentMarkdown(call, card.requesters) ?? []].flat();
  elements.push(markdown(detailsMarkdown(card, leading, call.whoMayApprove)));
  const reading = readingButtons(
    card,
    argumentsCut(call, layout.argumentsLimit) ? { show_arguments: call.approvalId } : undefined,
  );
  const outcome = outcomeMarkdown(call);
  if (outcome) {
    elements.push({ tag: 'hr' }, { tag: 'markdown', element_id: 'outcome', content: `**${outcome}**` });
    // A decided card still shows what was decided on.
    if (reading.length > 0) elements.push(buttonRow(reading));
  } else {
    elements.push(callButtons(card, call, 0, layout, reading));
  }
  const template = call.status === 'pending' ? pendingTemplate[call.risk] : decidedTemplate[call.status];
  return cardShell({ title, subtitle: `${call.risk} risk`, template }, [call], elements);
}

function batchHeader(card: ApprovalCard): CardHeader {
  const { calls } = card;
  const pending = pendingCalls(card);
  if (pending.length > 0) {
    const risk = highestRisk(pending);
    const mixed = pending.some((call) => call.risk !== risk);
    return {
      title:
        pending.length === calls.length
          ? `${calls.length} actions need approval`
          : `${pending.length} of ${calls.length} actions need approval`,
      subtitle: `${mixed ? 'up to ' : ''}${risk} risk`,
      template: pendingTemplate[risk],
    };
  }
  const counts = (['approved', 'rejected', 'expired'] as const)
    .map((status) => [status, calls.filter((call) => call.status === status).length] as const)
    .filter(([, count]) => count > 0);
  const [only] = counts;
  const title =
    counts.length === 1 && only
      ? `${titles[only[0]]}: ${calls.length} actions`
      : `${calls.length} actions: ${counts.map(([status, count]) => `${count} ${status}`).join(', ')}`;
  const anyApproved = calls.some((call) => call.status === 'approved');
  return { title, subtitle: `${highestRisk(calls)} risk`, template: anyApproved ? 'green' : 'grey' };
}

function callMarkdown(
  card: ApprovalCard,
  call: ApprovalCardCall,
  index: number,
  layout: Layout,
  showWho: boolean,
): string {
  const lines = [
    `**${index + 1}.** ${toolMarkdown(call)} · ${call.risk} risk`,
    agentMarkdown(call, card.requesters) ?? [],
    escapeMarkdown(truncateText(call.summary, layout.summaryLimit)),
  ].flat();
  if (layout.argumentsLimit > 0) lines.push(argumentsMarkdown(call, layout.argumentsLimit));
  else
    lines.push(`*Arguments not shown (${characters(call.argumentsLength)}): the card has no room for them.*`);
  if (showWho && call.status === 'pending')
    lines.push(`Who may approve: ${escapeMarkdown(call.whoMayApprove)}`);
  const outcome = outcomeMarkdown(call);
  if (outcome) lines.push(`**${outcome}**`);
  return lines.join('\n');
}

function renderBatch(card: ApprovalCard, layout: Layout): JsonRecord {
  const pending = pendingCalls(card);
  const whoMayApprove = new Set(card.calls.map((call) => call.whoMayApprove));
  const sameWho = whoMayApprove.size === 1 ? [...whoMayApprove][0] : undefined;
  const shown = card.calls.slice(0, layout.shownCalls);
  const elements: JsonRecord[] = [];
  shown.forEach((call, index) => {
    if (index > 0) elements.push({ tag: 'hr' });
    elements.push(markdown(callMarkdown(card, call, index, layout, sameWho === undefined)));
    if (call.status === 'pending' && index < callsWithOwnButtons)
      elements.push(callButtons(card, call, index, layout));
  });
  const hidden = card.calls.slice(shown.length);
  if (hidden.length > 0) {
    const waiting = hidden.filter((call) => call.status === 'pending').length;
    elements.push(
      markdown(
        `*…and ${hidden.length} more (${waiting} waiting) that do not fit on the card. Approve all and Reject all include them.*`,
      ),
    );
  }
  elements.push({ tag: 'hr' }, markdown(detailsMarkdown(card, [], sameWho)));
  const leftOut = hidden.length > 0 || shown.some((call) => argumentsCut(call, layout.argumentsLimit));
  const reading = readingButtons(card, leftOut ? { show_arguments_batch: card.batchId } : undefined);
  // A pending call without buttons of its own can only be decided with the "all" buttons.
  const withoutButtons = pending.some(
    (call) => card.calls.indexOf(call) >= Math.min(callsWithOwnButtons, shown.length),
  );
  if (pending.length >= 2 || withoutButtons) elements.push(batchButtons(card, pending, reading));
  else if (reading.length > 0) elements.push(buttonRow(reading));
  return cardShell(batchHeader(card), card.calls, elements);
}

/** Shares out the text budget among the calls, then shrinks text and the list until the card fits. */
function* layouts(callCount: number): Generator<Layout> {
  const count = Math.max(1, callCount);
  let shownCalls = Math.min(callCount, shownCallsLimit);
  let argumentsLimit = Math.min(cardArgumentsLimit, Math.floor(12_000 / count));
  let summary = Math.min(summaryLimit, Math.max(200, Math.floor(6_000 / count)));
  while (argumentsLimit >= 40) {
    yield { summaryLimit: summary, argumentsLimit, shownCalls };
    argumentsLimit = Math.floor(argumentsLimit * 0.7);
    summary = Math.max(80, Math.floor(summary * 0.7));
  }
  yield { summaryLimit: 80, argumentsLimit: 0, shownCalls };
  while (shownCalls > 1) {
    shownCalls -= 1;
    yield { summaryLimit: 80, argumentsLimit: 0, shownCalls };
  }
}

/**
 * Whether Feishu takes the card: measured on the request body that carries it, escapes included (arguments
 * full of quotes and backslashes take four times their length there), and no more tables than a card holds.
 */
function fits(rendered: JsonRecord): boolean {
  const elements = (recordField(rendered, 'body')?.elements ?? []) as JsonRecord[];
  const tables = elements.reduce(
    (sum, element) => sum + (element.tag === 'markdown' ? tableCount(String(element.content)) : 0),
    0,
  );
  return cardBodyBytes(rendered) <= cardBodyBudgetBytes && tables <= maxTablesPerCard;
}

export function renderApprovalCard(card: ApprovalCard): JsonRecord {
  const [only] = card.calls;
  const render = (layout: Layout) =>
    card.calls.length === 1 && only ? renderSingleCall(card, only, layout) : renderBatch(card, layout);
  let rendered: JsonRecord = {};
  for (const layout of layouts(card.calls.length)) {
    rendered = render(layout);
    if (fits(rendered)) return rendered;
  }
  return rendered;
}
