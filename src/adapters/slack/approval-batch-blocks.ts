import {
  type ApprovalCard,
  type ApprovalCardCall,
  callsWithOwnButtons,
  pendingCalls,
  toolLabel,
} from '../../core/contracts/approval-card.js';
import { truncateText } from '../../core/text/index.js';
import { argumentsCode } from './approval-arguments.js';
import {
  agentLine,
  approverMentions,
  askedByAgents,
  askedBySuffix,
  batchActions,
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
  escapedWithin,
  type RenderedMessage,
  type SlackBlock,
  section,
  slackDate,
  textLength,
} from './block-kit.js';

/**
 * Block Kit for a card with several calls of one model step: a header, then each call with its own
 * buttons (the first `callsWithOwnButtons`), then "Approve all" / "Reject all". Slack caps a message at
 * 50 blocks and about 12,000 characters, so the calls share what text is left after the fixed parts.
 */

/** Longest summary a call shows on a shared card; the arguments below say the rest. */
const summaryLimit = 600;
/** Confirm dialogs of per-call buttons are kept short: up to ten of them share the card's text budget. */
const callConfirmTextLimit = 150;

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * One call's section text, at most `limit` characters, and whether its arguments were cut. Heading and
 * status (who may approve, or the outcome) come first; the summary and then the arguments get what room is
 * left.
 */
function callText(
  card: ApprovalCard,
  call: ApprovalCardCall,
  number: number,
  limit: number,
): { text: string; cut: boolean } {
  const heading = [`*${number}.* ${toolHeading(call)} · ${riskLabels[call.risk]}`, agentLine(card, call)]
    .filter((line) => line)
    .join('\n');
  const outcome = outcomeMrkdwn(call, 200);
  const status = outcome
    ? `${outcomeIcons[call.status]} *${outcome}*`
    : `Who may approve: ${escapedWithin(call.whoMayApprove, 120)}`;
  const room = limit - heading.length - status.length - 2;
  if (room <= 0) return { text: truncateText(`${heading}\n${status}`, limit), cut: true };
  // The summary is the tool's words: its first line in the code block shows them as they are, not as
  // formatting; the arguments follow, and a note says how much of them did not fit.
  const summary = truncateText(call.summary.replace(/\s+/g, ' '), summaryLimit);
  const code = argumentsCode(call, room, summary);
  return {
    text: [heading, code?.text, status].filter((line) => line).join('\n'),
    cut: code?.cut ?? true,
  };
}

/**
 * Splits `total` characters between calls: a call needing less than an even share takes only what it
 * needs, and the rest goes to the others.
 */
function shareBudget(needs: readonly number[], total: number): number[] {
  const shares = needs.map(() => 0);
  const order = needs.map((need, index) => ({ need, index })).sort((left, right) => left.need - right.need);
  let remaining = Math.max(0, total);
  order.forEach(({ need, index }, position) => {
    const share = Math.min(need, Math.floor(remaining / (order.length - position)));
    shares[index] = share;
    remaining -= share;
  });
  return shares;
}

function header(card: ApprovalCard, pendingCount: number): SlackBlock {
  const total = card.calls.length;
  const title =
    pendingCount === 0
      ? `*${plural(total, 'tool call')}*`
      : pendingCount === total
        ? `:lock: *${plural(total, 'action')} need approval*`
        : `:lock: *${pendingCount} of ${plural(total, 'action')} still need approval*`;
  const deadline = `${pendingCount > 0 ? 'Expires' : 'Expiry'} ${slackDate(card.expiresAt)}`;
  const lines = [title, `Requested by ${requesterMentions(card)} · ${deadline}`];
  const mentions = approverMentions(card.approverIds);
  if (mentions) lines.push(`Approvers: ${mentions}`);
  return section(lines.join('\n'));
}

function fallbackText(card: ApprovalCard, pending: readonly ApprovalCardCall[]): string {
  if (pending.length > 0) {
    const tools = [...new Set(pending.map((call) => `${toolLabel(call)}${askedBySuffix(call)}`))].join(', ');
    return `Approval needed for ${plural(pending.length, 'action')}: ${tools}`;
  }
  const counts = new Map<string, number>();
  for (const call of card.calls) counts.set(call.status, (counts.get(call.status) ?? 0) + 1);
  const outcomes = [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
  const asked = askedByAgents(card.calls);
  return `${plural(card.calls.length, 'tool call')}${asked ? ` (${asked})` : ''}: ${outcomes}`;
}

/** Why some calls have no buttons, or are not on the card at all. */
function footnote(hiddenCalls: readonly ApprovalCardCall[], buttonless: number): string | undefined {
  const lines: string[] = [];
  if (buttonless > 0)
    lines.push(
      `Calls after the first ${callsWithOwnButtons} have no buttons of their own: Approve all and Reject all decide them.`,
    );
  if (hiddenCalls.length > 0) {
    const pendingHidden = hiddenCalls.filter((call) => call.status === 'pending').length;
    const tools = [...new Set(hiddenCalls.map((call) => `\`${call.toolName}\``))].join(', ');
    const decideThem = pendingHidden > 0 ? '; Approve all and Reject all decide them too' : '';
    lines.push(
      `${plural(hiddenCalls.length, 'more call')} (${pendingHidden} pending) did not fit on this Slack message${decideThem}: ${tools}`,
    );
  }
  return lines.length > 0 ? truncateText(lines.join('\n'), 600) : undefined;
}

export function renderBatchCard(card: ApprovalCard): RenderedMessage {
  const pending = pendingCalls(card);
  const ownButtons = card.calls.map((call, index) =>
    call.status === 'pending' && index < callsWithOwnButtons
      ? callActions(card, call, { blockId: `butler_call_${index}`, confirmTextLimit: callConfirmTextLimit })
      : undefined,
  );
  const ownButtonBlocks = ownButtons.filter((block) => block).length;
  const buttonless = pending.length - ownButtonBlocks;
  // With one call left and its own buttons, "all" would be a second way to say the same thing.
  const allButtons = pending.length >= 2 || buttonless > 0 ? batchActions(card) : undefined;

  // "Show all arguments" and the console link sit beside "all", or in their own block. Their room is kept
  // before the calls share the rest; "Show all" goes again if, in the end, nothing was left out.
  const reading = readingButtons(card, { batchId: card.batchId });
  // Blocks left for the calls' sections once the header, the calls' own actions blocks and the last one
  // (the "all" or the reading buttons) are counted, keeping one for the footnote whenever some calls do
  // not fit.
  let room = blockLimits.blocks - 2 - ownButtonBlocks;
  if (buttonless > 0 || card.calls.length > room) room -= 1;
  const shown = card.calls.slice(0, room);
  const note = footnote(card.calls.slice(room), buttonless);

  const head = header(card, pending.length);
  const fixedText = textLength([head, ownButtons, allButtons, reading]) + (note?.length ?? 0);
  const needs = shown.map(
    (call, index) => callText(card, call, index + 1, blockLimits.sectionText).text.length,
  );
  const shares = shareBudget(needs, blockLimits.messageText - fixedText);
  const texts = shown.map((call, index) => callText(card, call, index + 1, shares[index] ?? 0));
  const leftOut = shown.length < card.calls.length || texts.some((text) => text.cut);
  const buttons = readingButtons(card, leftOut ? { batchId: card.batchId } : undefined);

  const blocks: SlackBlock[] = [head];
  texts.forEach(({ text }, index) => {
    blocks.push(section(text));
    const actions = ownButtons[index];
    if (actions) blocks.push(actions);
  });
  if (note) blocks.push(section(note));
  if (allButtons) blocks.push(batchActions(card, buttons));
  else if (buttons.length > 0)
    blocks.push({ type: 'actions', block_id: 'butler_reading', elements: buttons });
  return { text: notificationText(fallbackText(card, pending)), blocks };
}
