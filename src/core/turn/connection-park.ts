import type { ConnectionOwner, ConnectionWaitRecord } from '../contracts/connection-records.js';
import type { ConversationMessage } from '../contracts/messages.js';
import type { ApprovalRecord, ResumeState } from '../contracts/store.js';
import {
  approvedCall,
  type Resolution,
  recordNotRun,
  type ToolResult,
  type ToolScope,
} from '../tool-calls/index.js';
import { reportTurnEvent, type Turn, type TurnRunnerDeps } from './turn.js';
import { commitTurnWith, deliverReply, resumeStateOf } from './turn-endings.js';

/**
 * Parks a turn until a person connects an account its calls act with, as an approval parks it: the wait is
 * durable, the person gets a private single-use Connect link (never in the shared thread, where someone else
 * could complete it), and the turn goes on in any process once they have connected, or once the wait ends.
 */

type NeedsConnection = Extract<Resolution, { status: 'needs_connection' }>;

export async function parkForConnection(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
  assistant: ResumeState['assistant'],
  resolution: NeedsConnection,
) {
  const { connections, store, options } = deps;
  if (!connections) throw new Error('a call needs a connection, and no connections are configured');
  const { server, owner, callIds, scope } = resolution.need;
  const who = connections.people.nameOf(owner.person) ?? owner.person.name ?? owner.person.id;
  const sent = await sendLink(deps, turn, server, owner, scope).catch((error: unknown) => {
    turn.log.warn({ err: error, server }, 'could not send a Connect link privately');
    return false;
  });
  const minutes = Math.round(connections.linkTtlMs / 60_000);
  const lead = turn.reply.shown.trim() ? '\n\n' : '';
  const needs = scope ? `${who} to let ${server} do more (${scope})` : `${who}'s ${server} account`;
  await turn.reply.append(
    sent
      ? `${lead}This needs ${needs}. I sent ${who} a private link to connect it (it works for ${minutes} minutes) and will go on here once they have.`
      : `${lead}This needs ${needs}, and I could not send ${who} a private link here. They can get one by asking me in a direct message, or from the API (POST /api/v1/connections/${server}/link); I will go on here once they have connected.`,
  );
  await deliverReply(deps, turn);
  const { agents, approved } = resolution;
  const resume = {
    ...(await resumeStateOf(turn, assistant, resolution.results, agents)),
    ...(approved.length > 0 ? { approved } : {}),
  };
  const wait = await store.transaction(async (tx) => {
    const created = await tx.connections.createWait({
      server,
      ownerKey: owner.key,
      owner: owner.person,
      conversationKey: turn.conversation.key,
      platform: turn.target.address.platform,
      requestedBy: turn.requester,
      requesters: turn.requesters,
      callIds,
      resume,
      expiresAt: new Date(Date.now() + options.approvalTtlMs),
    });
    await commitTurnWith(deps, tx, turn, pending, 'done');
    return created;
  });
  turn.log.info(
    { server, owner: owner.key, waitId: wait.id, calls: callIds.length },
    'turn parked for a connection',
  );
  turn.session.ended('parked');
  turn.observer.end({ status: 'parked' });
  await reportTurnEvent(turn, {
    type: 'connection_required',
    server,
    expiresAt: wait.expiresAt.toISOString(),
  });
}

/**
 * Sends the Connect link to the person on the conversation's platform (their identity there when the
 * people list says who they are on it). False when no private way to them exists here.
 */
async function sendLink(
  deps: TurnRunnerDeps,
  turn: Turn,
  server: string,
  owner: ConnectionOwner,
  scope: string | undefined,
): Promise<boolean> {
  const { connections } = deps;
  if (!connections) return false;
  const platform = turn.target.address.platform;
  const person = connections.people.on(owner.person, platform);
  if (!person || !turn.adapter.sendPrivateLink) return false;
  const link = await connections.offerLink(server, owner, scope);
  await turn.adapter.sendPrivateLink(turn.target, person, {
    text: `Butler needs your ${server} account for what you asked. Connect it here; the link is yours alone, works once, and expires at ${link.expiresAt.toISOString().slice(11, 16)} UTC.`,
    label: `Connect ${server}`,
    url: link.url,
    id: link.id,
    expiresAt: link.expiresAt,
  });
  return true;
}

/**
 * The continuation of a wait nobody ended by connecting: the calls that waited are answered with why they did not
 * run (approved ones are audited as not run), and so are the sub-agents that waited with them.
 */
export async function connectionLapsed(
  scope: ToolScope,
  wait: ConnectionWaitRecord,
  approvals: readonly ApprovalRecord[],
): Promise<{ decided: ToolResult[]; parked: [] }> {
  const who = wait.owner.name ?? wait.owner.id;
  const why = `${who} did not connect ${wait.server} before the wait ended`;
  for (const approval of approvals)
    await recordNotRun(scope, {
      call: approvedCall(approval, wait.resume.assistant),
      risk: approval.risk,
      decision: 'approved',
      approvalId: approval.id,
      decidedBy: approval.decidedBy?.id ?? null,
      arguments: approval.arguments,
      error: why,
    });
  const decided = [
    ...wait.callIds.map((toolCallId) => ({ toolCallId, content: `Not run: ${why}.` })),
    ...(wait.resume.agents ?? []).map((frame) => ({
      toolCallId: frame.delegateCallId,
      content: `Not run: the ${frame.agent} agent waited, and ${why}.`,
    })),
  ];
  return { decided, parked: [] };
}
