import { buildSystemPrompt } from '../brain/prompt.js';
import type { Files } from '../files/index.js';
import type { ToolScope } from '../tool-calls/index.js';
import { turnBinding } from './delegation.js';
import { questionAsker } from './live-question.js';
import { reportTurnEvent, type Turn, type TurnRunnerDeps } from './turn.js';

/** What a turn's model steps are given: the scope its tool calls resolve in, and its system prompt. */

/** Sends the files a call produced into the turn's conversation, where its reply goes. */
function fileSender(turn: Turn, files: Files): NonNullable<ToolScope['deliverFiles']> {
  return (callId, produced, origin) =>
    files.delivery.deliver(
      {
        adapter: turn.adapter,
        target: turn.target,
        conversationKey: turn.conversation.key,
        ...(files.publicUrl ? { publicUrl: files.publicUrl } : {}),
        logger: turn.log,
      },
      // The provider's call id is unique only within a turn (some servers number calls call_0, call_1 …):
      // keyed by the turn's first inbox event too, a retry of the turn finds its files, another turn does not.
      { callId: `${turn.eventIds[0] ?? turn.id}:${callId}`, origin, files: produced },
    );
}

export function toolScopeOf(deps: TurnRunnerDeps, turn: Turn, afterToolOutput: boolean): ToolScope {
  const { delegator, tools, name: profile } = turn.profile;
  const ask = questionAsker(deps, turn);
  return {
    ...(delegator ? { delegation: delegator.forTurn(turnBinding(turn)) } : {}),
    store: deps.store,
    tools,
    policy: deps.policy,
    approvals: deps.approvals,
    ...(deps.connections ? { connections: deps.connections } : {}),
    conversationKey: turn.conversation.key,
    address: turn.target.address,
    requester: turn.requester,
    requesters: turn.requesters,
    ...(turn.target.replyTo ? { replyTo: turn.target.replyTo } : {}),
    isDirect: turn.isDirect,
    ...(turn.scheduleId ? { scheduleId: turn.scheduleId } : {}),
    ...(profile ? { profile } : {}),
    afterToolOutput,
    observer: turn.observer,
    logger: turn.log,
    signal: turn.signal,
    report: (event) => reportTurnEvent(turn, event),
    ...(deps.files ? { deliverFiles: fileSender(turn, deps.files) } : {}),
    ...(turn.grant ? { grant: turn.grant } : {}),
    ...(turn.adapter.messageSearch ? { messageSearch: turn.adapter.messageSearch } : {}),
    ...(ask ? { ask } : {}),
  };
}

export function systemPromptOf(deps: TurnRunnerDeps, turn: Turn, note?: string): string {
  const { memories, pendingApprovals: pending } = turn.opening;
  const pendingApprovals = pending.map(
    (approval) =>
      `- ${approval.toolName}: ${approval.summary} (requested by ${approval.requestedBy.name ?? approval.requestedBy.id})`,
  );
  const prompt = buildSystemPrompt({
    operatorPrompt: deps.options.systemPrompt,
    channelInstructions: turn.profile.instructions,
    address: turn.target.address,
    isDirect: turn.isDirect,
    now: new Date(),
    timezone: turn.requester.timezone,
    scheduled: turn.scheduleId !== undefined,
    memories,
    pendingApprovals,
    searchable: turn.profile.tools.get('search_messages') !== undefined,
  });
  return note ? `${prompt}\n\n${note}` : prompt;
}
