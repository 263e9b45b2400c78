import { onPlatform } from '../contracts/events.js';
import type { InputNeededError } from '../contracts/input-needed.js';
import type { ToolCall } from '../contracts/messages.js';
import type { ApprovalRecord, ApprovedWait } from '../contracts/store.js';
import type { Tool } from '../tools/tool.js';
import { approvedCall, resolveApprovedCall } from './approved-call.js';
import { refuse, runTool, validateCall } from './run.js';
import type {
  ConnectionNeed,
  InputNeed,
  ParkedRun,
  PendingCall,
  Resolution,
  ToolResult,
  ToolScope,
} from './scope.js';

/**
 * Resolves a model step's tool calls: invalid ones get an error result, low-risk ones and those a standing
 * approval covers run, and the rest wait together for a person's decision on one card.
 */

/** Results in the order of the calls they answer (the model API wants them so). */
export function inCallOrder(calls: readonly ToolCall[], results: readonly ToolResult[]): ToolResult[] {
  const position = new Map(calls.map((call, index) => [call.id, index]));
  return [...results].sort(
    (left, right) =>
      (position.get(left.toolCallId) ?? Number.MAX_SAFE_INTEGER) -
      (position.get(right.toolCallId) ?? Number.MAX_SAFE_INTEGER),
  );
}

/**
 * Resolves every call of `calls` that `previous` has no result for and no run in `parked` answers. Calls
 * are independent (models ask for several at once only for independent work), so those that need no
 * decision run now, even when an earlier one waits for a card; `delegate` calls run their sub-agents
 * last, together. `approvals` are decisions already taken on some of the calls: those run (once) or say why
 * not, unless the connection an approved call acts with is missing: then it waits for it, approved.
 */
export async function resolveToolCalls(
  scope: ToolScope,
  calls: readonly ToolCall[],
  previous: readonly ToolResult[],
  parked: readonly ParkedRun[] = [],
  approvals: readonly ApprovalRecord[] = [],
): Promise<Resolution> {
  const results = [...previous];
  const resolved = new Set([
    ...previous.map((result) => result.toolCallId),
    ...parked.map((run) => run.frame.delegateCallId),
  ]);
  const pending: PendingCall[] = [];
  const delegations: ToolCall[] = [];
  const waiting = [...parked];
  const approved: ApprovedWait[] = [];
  let need: ConnectionNeed | undefined;
  let asked: InputNeed | undefined;
  /**
   * One question at a time: the first call a server did not finish waits for its answers; any other that asked
   * too is made again after (it did not finish either, so it has not run).
   */
  const awaitInput = (asks: InputNeededError, call: ToolCall, tool: Tool) => {
    asked ??= {
      callId: call.id,
      server: asks.server,
      toolName: tool.name,
      requests: asks.requests,
      requestState: asks.requestState,
    };
  };
  /** Adds a call to the one connection the step waits for; false when it needs another one (looked at later). */
  const awaitConnection = (
    missing: { server: string; owner: ConnectionNeed['owner']; scope?: string | undefined },
    callId: string,
  ) => {
    need ??= { server: missing.server, owner: missing.owner, callIds: [] };
    if (need.server !== missing.server || need.owner.key !== missing.owner.key) return false;
    if (missing.scope) need.scope = unionOf(need.scope, missing.scope);
    need.callIds.push(callId);
    return true;
  };
  for (const approval of approvals) {
    const call = approvedCall(approval, { toolCalls: calls });
    if (resolved.has(call.id)) continue;
    resolved.add(call.id);
    const tool = approval.status === 'approved' ? scope.tools.get(call.name) : undefined;
    const connection = tool ? await connectionOf(scope, tool) : { status: 'ready' as const };
    if (connection.status === 'missing' && awaitConnection(connection, call.id)) {
      approved.push({ toolCallId: call.id, approvalId: approval.id });
      continue;
    }
    const outcome = await resolveApprovedCall(scope, approval, call);
    if ('asks' in outcome) {
      if (tool) awaitInput(outcome.asks, call, tool);
      approved.push({ toolCallId: call.id, approvalId: approval.id });
      continue;
    }
    if (!('needs' in outcome)) results.push(outcome);
    else if (awaitConnection(outcome.needs, call.id))
      approved.push({ toolCallId: call.id, approvalId: approval.id });
    else results.push({ toolCallId: call.id, content: `Error: ${outcome.needs.message}` });
  }
  for (const call of calls) {
    if (resolved.has(call.id)) continue;
    if (scope.delegation?.handles(call)) {
      delegations.push(call);
      continue;
    }
    const checked = await validateCall(scope, call);
    if (!checked.ok) {
      results.push(checked.result);
      continue;
    }
    const { tool, input } = checked;
    const connection = await connectionOf(scope, tool);
    if (connection.status === 'refused') {
      results.push(await refuse(scope, call, tool.risk, connection.reason));
      continue;
    }
    if (connection.status === 'missing') {
      // One connection at a time: calls needing another one are looked at again once this one is made.
      awaitConnection(connection, call.id);
      continue;
    }
    const personal = tool.personal?.(input, scope.requesters);
    if (personal && !personal.ok) {
      results.push(await refuse(scope, call, tool.risk, personal.error));
      continue;
    }
    // A person's own data is written from their own words: when others wrote too, or tool output came
    // first, the model may have been steered, so that person confirms (no standing approval covers it).
    if (personal?.ok && (scope.requesters.length > 1 || scope.afterToolOutput)) {
      pending.push({ call, tool, input, risk: 'medium', confirmBy: personal.owner });
      continue;
    }
    const grant = scope.policy.needsApproval(tool.risk)
      ? await scope.approvals.standingGrant({
          conversationKey: scope.conversationKey,
          toolName: tool.name,
          risk: tool.risk,
          requesters: scope.requesters.map((requester) => onPlatform(requester, scope.address.platform)),
        })
      : undefined;
    if (scope.policy.needsApproval(tool.risk) && !grant) {
      pending.push({ call, tool, input, risk: tool.risk });
      continue;
    }
    const outcome = await runTool(scope, {
      tool,
      call,
      arguments: input,
      decision: grant ? 'granted' : 'auto',
      approvalId: null,
      decidedBy: grant?.grantedBy.id ?? null,
      ...(grant ? { grantId: grant.id } : {}),
    });
    if (outcome.needs && awaitConnection(outcome.needs, call.id)) continue;
    if (outcome.asks) {
      awaitInput(outcome.asks, call, tool);
      continue;
    }
    results.push({
      toolCallId: call.id,
      content: outcome.content,
      ...(outcome.kept === undefined ? {} : { kept: outcome.kept }),
    });
  }
  // Nothing is asked of anyone else while a connection is missing: the rest is resolved once it is made, and
  // parked sub-agent runs wait with it.
  const frames = () => waiting.map((run) => run.frame);
  if (need) return { status: 'needs_connection', results, need, agents: frames(), approved };
  if (asked) return { status: 'needs_input', results, need: asked, agents: frames(), approved };
  if (scope.delegation && delegations.length > 0) {
    for (const outcome of await scope.delegation.run(scope, delegations)) {
      if (outcome.status === 'done') results.push(outcome.result);
      else waiting.push(outcome.run);
    }
  }
  // A sub-agent that waits for a connection parks the turn for it; its calls are the run's, not this step's.
  const runNeed = waiting.find((run) => run.need)?.need;
  if (runNeed)
    return {
      status: 'needs_connection',
      results,
      need: { ...runNeed, callIds: [] },
      agents: frames(),
      approved,
    };
  pending.push(...waiting.flatMap((run) => run.pending));
  return pending.length > 0
    ? { status: 'needs_approval', results, pending, agents: waiting.map((run) => run.frame) }
    : { status: 'complete', results };
}

/** Whether `tool`'s connection is there for the people who asked; a call that needs a missing one waits for it. */
async function connectionOf(scope: ToolScope, tool: Tool) {
  if (!tool.connection || !scope.connections) return { status: 'ready' } as const;
  const people = scope.requesters.map((requester) => onPlatform(requester, scope.address.platform));
  return scope.connections.readiness(tool.connection, people);
}

/** Two space-separated scope lists as one, each scope once. */
function unionOf(held: string | undefined, asked: string): string {
  return [...new Set([...(held ?? '').split(' '), ...asked.split(' ')].filter(Boolean))].join(' ');
}
