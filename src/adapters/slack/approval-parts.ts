import {
  type ApprovalCard,
  type ApprovalCardCall,
  type ApprovalStatus,
  durationWords,
  outcomeLine,
  pendingCalls,
} from '../../core/contracts/approval-card.js';
import { joinNames, markdownToPlainText } from '../../core/text/index.js';
import type { Risk } from '../../core/tools/tool.js';
import { blockLimits, escapedWithin, mrkdwn, plain, type SlackBlock, slackDate } from './block-kit.js';
import { escapeMrkdwn } from './mrkdwn.js';

/** Pieces every approval card shares, one call or several: button ids, labels, the buttons themselves. */

/** Per-call buttons: the value is the call's approvalId. */
export const approveActionId = 'butler_approve';
export const rejectActionId = 'butler_reject';
export const approveForConversationActionId = 'butler_approve_conversation';
/** "Approve all" / "Reject all": the value is the card's batchId. */
export const approveAllActionId = 'butler_approve_all';
export const rejectAllActionId = 'butler_reject_all';
/** "Show all arguments" opens a modal and decides nothing: the value is a call's approvalId, or the batchId. */
export const showArgumentsActionId = 'butler_show_arguments';
export const showBatchArgumentsActionId = 'butler_show_arguments_batch';
/** The console link: Slack still sends a click for a URL button, which is only acknowledged. */
export const openConsoleActionId = 'butler_open_console';

export const riskLabels: Record<Risk, string> = {
  low: 'Low',
  medium: 'Medium',
  high: ':warning: High',
};

export const outcomeIcons: Record<ApprovalStatus, string> = {
  pending: '',
  approved: ':white_check_mark:',
  rejected: ':no_entry_sign:',
  expired: ':hourglass:',
};

/**
 * "`records__delete_record` — delete_record on MCP server records", or the tool's name in code. The server
 * names its own tools, so their length is capped here.
 */
export function toolHeading(call: Pick<ApprovalCardCall, 'toolName' | 'origin'>): string {
  const name = `\`${call.toolName}\``;
  if (call.origin?.kind !== 'mcp') return name;
  const { tool, server } = call.origin;
  return `${name} — ${escapedWithin(tool, 100)} on MCP server ${escapedWithin(server, 100)}`;
}

/**
 * A decided call's outcome as mrkdwn: the decider's name and the typed reason escaped (they come from
 * people), times as `<!date>` so each reader sees their own time zone.
 */
export function outcomeMrkdwn(call: ApprovalCardCall, reasonLimit: number): string | undefined {
  const decidedBy = call.decidedBy
    ? { ...call.decidedBy, name: escapedWithin(call.decidedBy.name ?? call.decidedBy.id, 80) }
    : undefined;
  return outcomeLine(
    {
      ...call,
      ...(decidedBy ? { decidedBy } : {}),
      ...(call.reason ? { reason: escapedWithin(call.reason, reasonLimit) } : {}),
    },
    slackDate,
  );
}

/** Plain notification text: what a phone shows, escaped so that no `<!channel>` in it pings anyone. */
export function notificationText(text: string): string {
  return escapedWithin(markdownToPlainText(text), blockLimits.notificationText);
}

/** "<@A>", "<@A> and <@B>": everyone the card's calls were asked for. */
export function requesterMentions(card: ApprovalCard): string {
  return joinNames(card.requesters.map((user) => `<@${user.id}>`));
}

/** Agent names are short identifiers from configuration; a long one is cut so every call keeps its room. */
const agentNameLimit = 40;

/**
 * "Asked by the *ops* agent for @Alice" when Butler delegated the call to a specialist agent; undefined for
 * Butler's own calls. Agent names come from configuration, but are escaped like any other card text.
 */
export function agentLine(card: ApprovalCard, call: ApprovalCardCall): string | undefined {
  if (!call.agent) return undefined;
  return `:robot_face: Asked by the *${escapedWithin(call.agent, agentNameLimit)}* agent for ${requesterMentions(card)}`;
}

/** " (asked by the ops agent)" after a tool's name in notification text; empty for Butler's own calls. */
export function askedBySuffix(call: Pick<ApprovalCardCall, 'agent'>): string {
  return call.agent ? ` (asked by the ${escapedWithin(call.agent, agentNameLimit)} agent)` : '';
}

/**
 * "asked by the ops and docs agents" for the notification text of a card of several calls; "some asked by…"
 * when Butler asked for others itself; undefined when every call is Butler's own.
 */
export function askedByAgents(calls: readonly ApprovalCardCall[]): string | undefined {
  const agents = [
    ...new Set(calls.flatMap((call) => (call.agent ? [escapedWithin(call.agent, agentNameLimit)] : []))),
  ];
  const last = agents.pop();
  if (last === undefined) return undefined;
  const names = agents.length > 0 ? `${agents.join(', ')} and ${last} agents` : `${last} agent`;
  return `${calls.some((call) => !call.agent) ? 'some ' : ''}asked by the ${names}`;
}

/** Mentions of the configured approvers; a long list is cut so the card stays readable. */
export function approverMentions(approverIds: readonly string[], shown = 20): string {
  const mentions = approverIds.slice(0, shown).map((id) => `<@${id}>`);
  const more =
    approverIds.length > mentions.length ? ` and ${approverIds.length - mentions.length} more` : '';
  return `${mentions.join(', ')}${more}`;
}

/** Whether "Approve for this conversation" is offered: standing approvals are on for this card. */
function offersStandingApproval(
  card: ApprovalCard,
): card is ApprovalCard & { standingApprovalHours: number } {
  return card.standingApprovalHours !== undefined && card.standingApprovalHours > 0;
}

export interface ButtonSpec {
  actionId: string;
  text: string;
  value: string;
  style?: 'primary' | 'danger';
  confirm?: { title: string; text: string; confirm: string };
}

export function button(spec: ButtonSpec, confirmTextLimit: number): SlackBlock {
  const element: SlackBlock = {
    type: 'button',
    action_id: spec.actionId,
    text: plain(spec.text, blockLimits.buttonText),
    ...(spec.style ? { style: spec.style } : {}),
    value: spec.value,
  };
  if (spec.confirm) {
    element.confirm = {
      title: plain(spec.confirm.title, blockLimits.confirmTitle),
      text: mrkdwn(spec.confirm.text, Math.min(confirmTextLimit, blockLimits.confirmText)),
      confirm: plain(spec.confirm.confirm, blockLimits.confirmButton),
      deny: plain('Cancel', blockLimits.confirmButton),
      style: 'primary',
    };
  }
  return element;
}

/**
 * The buttons that only read: "Show all arguments" (of one call, or of every call of the card) when the card
 * left something out, and the console link when Butler knows its public address.
 */
export function readingButtons(
  card: ApprovalCard,
  show: { approvalId: string } | { batchId: string } | undefined,
): SlackBlock[] {
  const buttons: SlackBlock[] = [];
  if (show)
    buttons.push({
      type: 'button',
      action_id: 'batchId' in show ? showBatchArgumentsActionId : showArgumentsActionId,
      text: plain('Show all arguments', blockLimits.buttonText),
      value: 'batchId' in show ? show.batchId : show.approvalId,
    });
  if (card.link && card.link.length <= blockLimits.buttonUrl)
    buttons.push({
      type: 'button',
      action_id: openConsoleActionId,
      text: plain('Open in console', blockLimits.buttonText),
      url: card.link,
    });
  return buttons;
}

/**
 * Approve, Reject and (when standing approvals are on) "Approve for this conversation" for one pending
 * call, then `extra` buttons. High risk asks for confirmation on both approve buttons: a slip of the thumb
 * would run it.
 */
export function callActions(
  card: ApprovalCard,
  call: ApprovalCardCall,
  options: { blockId: string; confirmTextLimit: number; extra?: readonly SlackBlock[] },
): SlackBlock {
  const high = call.risk === 'high';
  const what = `Butler will run \`${call.toolName}\`: ${escapeMrkdwn(call.summary)}`;
  const elements = [
    button(
      {
        actionId: approveActionId,
        text: 'Approve',
        style: 'primary',
        value: call.approvalId,
        ...(high
          ? { confirm: { title: 'Approve a high-risk action?', text: what, confirm: 'Approve' } }
          : {}),
      },
      options.confirmTextLimit,
    ),
    button(
      { actionId: rejectActionId, text: 'Reject', style: 'danger', value: call.approvalId },
      options.confirmTextLimit,
    ),
  ];
  if (offersStandingApproval(card)) {
    const duration = durationWords(card.standingApprovalHours);
    const standing = `Butler will run \`${call.toolName}\` now, and its later calls in this conversation for the next ${duration} without asking.`;
    elements.push(
      button(
        {
          actionId: approveForConversationActionId,
          text: `Approve for this conversation (${duration})`,
          value: call.approvalId,
          ...(high
            ? { confirm: { title: 'Approve for this conversation?', text: standing, confirm: 'Approve' } }
            : {}),
        },
        options.confirmTextLimit,
      ),
    );
  }
  return { type: 'actions', block_id: options.blockId, elements: [...elements, ...(options.extra ?? [])] };
}

/** "Approve all" / "Reject all": they act on every call of the card still pending; then `extra` buttons. */
export function batchActions(card: ApprovalCard, extra: readonly SlackBlock[] = []): SlackBlock {
  const pending = pendingCalls(card);
  const highRisk = pending.filter((call) => call.risk === 'high');
  const names = [...new Set(highRisk.map((call) => `\`${call.toolName}\``))].join(', ');
  const approveAll = button(
    {
      actionId: approveAllActionId,
      text: 'Approve all',
      style: 'primary',
      value: card.batchId,
      ...(highRisk.length > 0
        ? {
            confirm: {
              title: 'Approve every pending action?',
              text: `Butler will run ${pending.length} actions, ${highRisk.length} of them high risk: ${names}`,
              confirm: 'Approve all',
            },
          }
        : {}),
    },
    blockLimits.confirmText,
  );
  const rejectAll = button(
    { actionId: rejectAllActionId, text: 'Reject all', style: 'danger', value: card.batchId },
    blockLimits.confirmText,
  );
  return { type: 'actions', block_id: 'butler_batch', elements: [approveAll, rejectAll, ...extra] };
}
