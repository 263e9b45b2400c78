import { decodeConversationKey, mainThread } from '../../core/contracts/conversation-key.js';
import type { HomeView, RecentConversation } from '../../core/contracts/read-models.js';
import { joinNames } from '../../core/text/index.js';
import { button, riskLabels, toolHeading } from './approval-parts.js';
import {
  blockLimits,
  escapedWithin,
  mrkdwn,
  plain,
  type SlackBlock,
  section,
  slackDate,
} from './block-kit.js';

/**
 * The App Home tab (`views.publish`, type `home`): a person's requests waiting for a decision, with Approve
 * and Reject where they may decide; their recent conversations; what Butler can do. Everything people, tools
 * and the model wrote is escaped. Slack shows at most 100 blocks in a home view: lists are cut, saying how
 * many more there are.
 */

/** The home tab's buttons: the value is one call's approvalId. Only a home view's clicks are read as these. */
export const homeApproveActionId = 'butler_home_approve';
export const homeRejectActionId = 'butler_home_reject';
export const homeCallbackId = 'butler_home';

/**
 * A home view holds 100 blocks (docs.slack.dev "Home tab views"): two per request shown, 40 at most, and
 * eleven around them.
 */
const approvalsShown = 20;
const summaryChars = 500;
const firstLineChars = 150;
const toolsShown = 60;
const agentsShown = 15;

export type RenderedHome = {
  type: 'home';
  callback_id: string;
  blocks: SlackBlock[];
};

const context = (text: string): SlackBlock => ({
  type: 'context',
  elements: [mrkdwn(text, blockLimits.sectionText)],
});

const more = (count: number, what: string): SlackBlock[] =>
  count > 0 ? [context(`…and ${count} more ${what}.`)] : [];

function approvalBlocks(approval: HomeView['approvals'][number]): SlackBlock[] {
  const { channel, thread } = decodeConversationKey(approval.conversationKey);
  const where = thread === mainThread || channel.startsWith('D') ? 'a direct message' : `<#${channel}>`;
  const askedBy = joinNames(approval.requesters.map((user) => `<@${user.id}>`));
  const agent = approval.agent ? ` by the *${escapedWithin(approval.agent.name, 40)}* agent` : '';
  const text = [
    `${toolHeading(approval)} · ${riskLabels[approval.risk]} risk`,
    escapedWithin(approval.summary, summaryChars),
    `Asked${agent} for ${askedBy} in ${where} · expires ${slackDate(approval.expiresAt)}`,
  ].join('\n');
  if (!approval.mayDecide)
    return [section(text), context('Waiting for an approver: you may not decide this one.')];
  const what = `Butler will run \`${approval.toolName}\`: ${escapedWithin(approval.summary, 200)}`;
  const confirm =
    approval.risk === 'high'
      ? { confirm: { title: 'Approve a high-risk action?', text: what, confirm: 'Approve' } }
      : {};
  const limit = blockLimits.confirmText;
  return [
    section(text),
    {
      type: 'actions',
      block_id: `butler_home_${approval.id}`,
      elements: [
        button(
          {
            actionId: homeApproveActionId,
            text: 'Approve',
            style: 'primary',
            value: approval.id,
            ...confirm,
          },
          limit,
        ),
        button({ actionId: homeRejectActionId, text: 'Reject', style: 'danger', value: approval.id }, limit),
      ],
    },
  ];
}

function conversationLine(conversation: RecentConversation): string {
  const { channel, thread } = conversation.address;
  const where = thread === mainThread || channel.startsWith('D') ? 'Direct message' : `<#${channel}>`;
  const line = conversation.firstLine ? escapedWithin(conversation.firstLine, firstLineChars) : '(no text)';
  return `• ${where} · ${slackDate(conversation.lastMessageAt)} · ${line}`;
}

function capabilitiesText(capabilities: HomeView['capabilities']): string {
  const { tools, agents } = capabilities;
  const toolList = tools
    .slice(0, toolsShown)
    .map((tool) => `\`${escapedWithin(tool.name, 80)}\` (${tool.risk})`)
    .join(', ');
  const moreTools = tools.length > toolsShown ? `, and ${tools.length - toolsShown} more` : '';
  const agentLines = agents
    .slice(0, agentsShown)
    .map((agent) => `• *${escapedWithin(agent.name, 40)}*: ${escapedWithin(agent.description, 120)}`);
  const moreAgents = agents.length > agentsShown ? [`…and ${agents.length - agentsShown} more agents`] : [];
  return [
    '*What Butler can do*',
    tools.length > 0
      ? `Tools, with their risk (medium and high ask for approval): ${toolList}${moreTools}`
      : 'No tools: Butler answers from what it knows.',
    ...(agents.length > 0 ? ['Agents Butler hands work to:', ...agentLines, ...moreAgents] : []),
  ].join('\n');
}

/** The home tab of `home`; `notice` (already mrkdwn) opens it, e.g. the outcome of a click there. */
export function renderHomeView(home: HomeView, notice?: string): RenderedHome {
  const approvals = home.approvals.slice(0, approvalsShown);
  const blocks: SlackBlock[] = [
    { type: 'header', text: plain('Butler', 150) },
    ...(notice ? [section(notice)] : []),
    section('*Waiting for a decision*'),
    ...(approvals.length === 0 ? [context('Nothing waits for you.')] : []),
    ...approvals.flatMap(approvalBlocks),
    ...more(home.approvals.length - approvals.length, 'requests'),
    { type: 'divider' },
    section('*Your recent conversations with Butler*'),
    home.conversations.length === 0
      ? context('None yet: mention Butler in a channel, or write to it here in Messages.')
      : section(home.conversations.map(conversationLine).join('\n')),
    { type: 'divider' },
    section(capabilitiesText(home.capabilities)),
  ];
  return { type: 'home', callback_id: homeCallbackId, blocks };
}
