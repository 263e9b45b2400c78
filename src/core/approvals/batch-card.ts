import {
  type ApprovalCard,
  type ApprovalCardCall,
  type ApprovalDetails,
  cardArgumentsLimit,
} from '../contracts/approval-card.js';
import { overBudgetToolName } from '../contracts/budget-records.js';
import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { ChatUser } from '../contracts/events.js';
import type { ApprovalRecord } from '../contracts/store.js';
import { truncateText, visibleControls } from '../text/index.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import { decisionParties } from './parties.js';

/** A pending approval whose deadline passed before the sweeper got to it: shown, and treated, as expired. */
export function isPastDeadline(approval: ApprovalRecord, now = new Date()): boolean {
  return approval.status === 'pending' && approval.expiresAt <= now;
}

/**
 * Where the approval's call comes in the turn (cards list calls in that order): Butler's step orders its
 * calls, a sub-agent's calls come at the place of the `delegate` call whose run asked for them.
 */
function callOrder(approval: ApprovalRecord): [number, number] {
  const { assistant, agents } = approval.resume;
  const position = (calls: readonly { id: string }[], id: string) => {
    const index = calls.findIndex((call) => call.id === id);
    return index === -1 ? Number.MAX_SAFE_INTEGER : index;
  };
  if (!approval.agent) return [position(assistant.toolCalls, approval.toolCallId), -1];
  const frame = agents?.find((candidate) => candidate.delegateCallId === approval.agent?.delegateCallId);
  return [
    position(assistant.toolCalls, approval.agent.delegateCallId),
    position(frame?.assistant.toolCalls ?? [], approval.toolCallId),
  ];
}

function byCallOrder(left: ApprovalRecord, right: ApprovalRecord): number {
  const [leftStep, leftAgent] = callOrder(left);
  const [rightStep, rightAgent] = callOrder(right);
  return leftStep - rightStep || leftAgent - rightAgent;
}

/** A name from the platform, shown as it is (a display name can hold invisible controls too). */
function visiblePerson<User extends ChatUser>(user: User): User {
  return user.name ? { ...user, name: visibleControls(user.name) } : user;
}

function cardCall(
  approval: ApprovalRecord,
  policy: ApprovalPolicy,
  argumentsLimit: number,
): ApprovalCardCall {
  const { confirmBy, requesters } = decisionParties(approval);
  // What the approver reads is what runs: invisible controls that could reorder or hide text show, in the
  // arguments and in the summary.
  const argumentsJson = visibleControls(JSON.stringify(approval.arguments, null, 2));
  const shown = truncateText(argumentsJson, argumentsLimit);
  return {
    approvalId: approval.id,
    status: isPastDeadline(approval) ? 'expired' : approval.status,
    toolName: approval.toolName,
    ...(approval.origin ? { origin: approval.origin } : {}),
    ...(approval.agent ? { agent: approval.agent.name } : {}),
    summary: visibleControls(approval.summary),
    argumentsJson: shown,
    argumentsLength: argumentsJson.length,
    argumentsCut: shown !== argumentsJson,
    risk: approval.risk,
    whoMayApprove: [
      policy.describe(approval.risk, {
        platform: approval.platform,
        requesters,
        confirmBy,
        quorum: approval.quorum,
        conversationKey: approval.conversationKey,
      }),
      ...progress(approval),
    ].join('; '),
    ...(approval.decidedBy ? { decidedBy: visiblePerson(approval.decidedBy) } : {}),
    ...(approval.decidedAt ? { decidedAt: approval.decidedAt } : {}),
    ...(approval.reason ? { reason: visibleControls(approval.reason) } : {}),
    ...(approval.standingUntil ? { standingUntil: approval.standingUntil } : {}),
  };
}

const clock = (at: Date | string) => `${new Date(at).toISOString().slice(11, 16)} UTC`;
const names = (people: readonly ChatUser[]) =>
  people.map((person) => visibleControls(person.name ?? person.id)).join(', ');

/**
 * What a waiting request has gathered, in words the card shows under "may approve": approvals so far of a
 * call that needs several ("1 of 2 approvals: Olga"), and who was reminded or escalated to, and when.
 */
function progress(approval: ApprovalRecord): string[] {
  const lines: string[] = [];
  if (approval.quorum > 1 && approval.status === 'pending')
    lines.push(
      `${approval.votes.length} of ${approval.quorum} approvals${approval.votes.length > 0 ? `: ${names(approval.votes)}` : ''}`,
    );
  for (const stage of ['reminder', 'escalation'] as const) {
    const sent = approval.noticeCards.filter((card) => card.stage === stage);
    const first = sent[0];
    if (!first) continue;
    const verb = stage === 'reminder' ? 'reminded' : 'escalated to';
    lines.push(`${verb} ${names(sent.map((card) => card.person))} at ${clock(first.at)}`);
  }
  return lines;
}

function firstOf(batch: readonly ApprovalRecord[]): ApprovalRecord {
  const [first] = batch;
  if (!first) throw new Error('an approval card needs at least one approval');
  return first;
}

/**
 * Whether "Approve for this conversation" may decide the batch: not a budget override, which lets one answer
 * go past its budget and never later turns.
 */
export const offersStanding = (batch: readonly ApprovalRecord[]) =>
  batch.every((approval) => approval.toolName !== overBudgetToolName);

/** The card of a batch: every call in the order the model asked for them, each with its own state. */
export function batchCard(
  batch: readonly ApprovalRecord[],
  policy: ApprovalPolicy,
  standingApprovalHours: number,
  link?: string,
): ApprovalCard {
  const first = firstOf(batch);
  const ordered = [...batch].sort(byCallOrder);
  // Several calls share the room one call's arguments would have.
  const argumentsLimit = Math.max(200, Math.floor(cardArgumentsLimit / ordered.length));
  return {
    batchId: first.batchId,
    calls: ordered.map((approval) => cardCall(approval, policy, argumentsLimit)),
    requesters: first.requesters.map(visiblePerson),
    // Mentions go to the approvers who can decide now.
    approverIds: policy.approversOn(first.platform, first.conversationKey),
    expiresAt: first.expiresAt,
    ...(standingApprovalHours > 0 && offersStanding(batch) ? { standingApprovalHours } : {}),
    ...(link ? { link } : {}),
  };
}

/** The calls of a batch with their arguments whole, in card order; only `approvalId`'s when it is given. */
export function batchDetails(
  batch: readonly ApprovalRecord[],
  policy: ApprovalPolicy,
  approvalId: string | undefined,
  link?: string,
): ApprovalDetails {
  const first = firstOf(batch);
  const calls = [...batch]
    .sort(byCallOrder)
    .filter((approval) => approvalId === undefined || approval.id === approvalId)
    .map((approval) => cardCall(approval, policy, Number.POSITIVE_INFINITY));
  return {
    batchId: first.batchId,
    address: decodeConversationKey(first.conversationKey),
    calls,
    requesters: first.requesters.map(visiblePerson),
    expiresAt: first.expiresAt,
    ...(link ? { link } : {}),
  };
}
