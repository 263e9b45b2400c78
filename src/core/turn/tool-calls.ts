import type { TurnEvent } from '../adapter.js';
import type { ApprovalService } from '../approvals/approval-service.js';
import { type ChatUser, type ConversationAddress, onPlatform } from '../events.js';
import type { Logger } from '../logger.js';
import type { ToolCall } from '../messages.js';
import type { StepObserver } from '../observer.js';
import type { AgentFrame, AuditEntry, Store } from '../store.js';
import { cleanJson, cleanText } from '../text.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { ToolSet } from '../tools/registry.js';
import type { Risk, Tool } from '../tools/tool.js';

/**
 * Resolves a model step's tool calls: invalid ones get an error result, low-risk ones and those a standing
 * approval covers run, and the rest wait together for a person's decision on one card.
 */

export interface ToolResult {
  toolCallId: string;
  content: string;
}

export interface ToolScope {
  store: Store;
  tools: ToolSet;
  policy: ApprovalPolicy;
  approvals: ApprovalService;
  conversationKey: string;
  address: ConversationAddress;
  /** The person the turn answered last. */
  requester: ChatUser;
  /** Everyone whose message the turn answered: each is a requester of every call. */
  requesters: readonly ChatUser[];
  /**
   * Whether the model may have read tool output (or, in a sub-agent, only Butler's words) before these
   * calls: a personal call (a memory) then needs its person's confirmation.
   */
  afterToolOutput: boolean;
  observer: StepObserver;
  logger: Logger;
  signal: AbortSignal;
  /** Runs `delegate` calls; absent where delegation is not allowed (inside a sub-agent). */
  delegation?: Delegation;
  /** The sub-agent whose calls these are; absent for Butler's own. */
  agent?: string;
  /** Tells the platform about each call and its result (the HTTP API streams them); never throws. */
  report?: (event: TurnEvent) => Promise<void>;
}

/** A validated call that needs a person's decision; `agent` when a sub-agent's run asked for it. */
export interface PendingCall {
  call: ToolCall;
  tool: Tool;
  input: unknown;
  /** The risk it is decided at: the tool's, or medium for a personal call that needs confirmation. */
  risk: Risk;
  /** A personal call: only this person confirms it. */
  confirmBy?: ChatUser;
  agent?: { name: string; delegateCallId: string };
}

/** A sub-agent's run waiting on decisions: its state and the calls it waits for. */
export interface ParkedRun {
  frame: AgentFrame;
  pending: PendingCall[];
}

export type DelegationOutcome = { status: 'done'; result: ToolResult } | { status: 'parked'; run: ParkedRun };

/** Butler's `delegate` calls in one turn, run by the agents room (`core/agents`). */
export interface Delegation {
  handles(call: ToolCall): boolean;
  /** Runs the calls' sub-agents (in parallel, bounded); one outcome per call, in order. */
  run(scope: ToolScope, calls: readonly ToolCall[]): Promise<DelegationOutcome[]>;
}

export type Resolution =
  | { status: 'complete'; results: ToolResult[] }
  | { status: 'needs_approval'; results: ToolResult[]; pending: PendingCall[]; agents: AgentFrame[] };

type Decision = AuditEntry['decision'];

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function audit(
  scope: ToolScope,
  entry: Omit<AuditEntry, 'conversationKey' | 'actor' | 'requesters'>,
): Promise<void> {
  try {
    await scope.store.audit.record({
      ...entry,
      conversationKey: scope.conversationKey,
      actor: scope.requester.id,
      requesters: scope.requesters.map((requester) => requester.id),
      agent: scope.agent ?? null,
    });
  } catch (error) {
    scope.logger.error({ err: error, tool: entry.toolName }, 'audit write failed');
  }
}

/** Rejects a call before anything runs; the model reads the reason and may try again. */
async function refuse(
  scope: ToolScope,
  call: ToolCall,
  risk: AuditEntry['risk'],
  reason: string,
): Promise<ToolResult> {
  const now = new Date();
  scope.observer.toolCall({
    toolName: call.name,
    callId: call.id,
    risk,
    decision: 'invalid',
    startTime: now,
    endTime: now,
    input: call.arguments,
    error: reason,
  });
  await audit(scope, {
    approvalId: null,
    toolName: call.name,
    toolCallId: call.id,
    arguments: call.arguments,
    risk,
    decision: 'invalid',
    outcome: 'not_run',
    decidedBy: null,
    error: reason,
    durationMs: 0,
  });
  return { toolCallId: call.id, content: `Error: ${reason}` };
}

/**
 * Records a call that did not run after its approval request (rejected, expired, or approved but its tool
 * was gone by then) in the audit log and the trace.
 */
export async function recordNotRun(
  scope: ToolScope,
  input: {
    call: ToolCall;
    risk: AuditEntry['risk'];
    decision: 'rejected' | 'expired' | 'approved';
    approvalId: string;
    decidedBy: string | null;
    arguments: unknown;
    error?: string;
  },
): Promise<void> {
  const now = new Date();
  scope.observer.toolCall({
    toolName: input.call.name,
    callId: input.call.id,
    risk: input.risk,
    decision: input.decision,
    startTime: now,
    endTime: now,
    input: input.arguments,
    ...(input.error ? { error: input.error } : {}),
  });
  await audit(scope, {
    approvalId: input.approvalId,
    toolName: input.call.name,
    toolCallId: input.call.id,
    arguments: input.arguments,
    risk: input.risk,
    decision: input.decision,
    outcome: 'not_run',
    decidedBy: input.decidedBy,
    error: input.error ?? null,
    durationMs: 0,
  });
}

/** Runs a validated call; a throwing tool becomes an error result for the model. Always audited. */
export async function runTool(
  scope: ToolScope,
  input: {
    tool: Tool;
    call: ToolCall;
    arguments: unknown;
    decision: Decision;
    approvalId: string | null;
    decidedBy: string | null;
    /** The standing approval it runs under, when no card was shown. */
    grantId?: string;
  },
): Promise<{ content: string; ok: boolean }> {
  const { tool, call } = input;
  await scope.report?.({ type: 'tool_call', id: call.id, name: tool.name, args: input.arguments });
  const startTime = new Date();
  let content: string;
  let error: string | null = null;
  try {
    const output = await tool.execute(input.arguments, {
      address: scope.address,
      conversationKey: scope.conversationKey,
      requester: scope.requester,
      requesters: scope.requesters,
      callId: call.id,
      signal: scope.signal,
      logger: scope.logger.child({ tool: tool.name }),
    });
    content = cleanText(output);
  } catch (caught) {
    error = cleanText(errorText(caught));
    content = `Error: the tool failed: ${error}`;
  }
  const endTime = new Date();
  await scope.report?.({ type: 'tool_result', id: call.id, name: tool.name, output: content, error });
  scope.observer.toolCall({
    toolName: tool.name,
    callId: call.id,
    risk: tool.risk,
    decision: input.decision,
    startTime,
    endTime,
    input: input.arguments,
    output: content,
    ...(error ? { error } : {}),
  });
  await audit(scope, {
    approvalId: input.approvalId,
    grantId: input.grantId ?? null,
    toolName: tool.name,
    toolCallId: call.id,
    arguments: input.arguments,
    risk: tool.risk,
    decision: input.decision,
    outcome: error ? 'failed' : 'succeeded',
    decidedBy: input.decidedBy,
    error,
    durationMs: endTime.getTime() - startTime.getTime(),
  });
  return { content, ok: error === null };
}

/** Checks a call's tool and arguments; returns the parsed input or a refusal. */
export async function validateCall(
  scope: ToolScope,
  call: ToolCall,
): Promise<{ ok: true; tool: Tool; input: unknown } | { ok: false; result: ToolResult }> {
  const tool = scope.tools.get(call.name);
  if (!tool) {
    const known = scope.tools.names().join(', ') || 'none';
    return {
      ok: false,
      result: await refuse(scope, call, 'unknown', `unknown tool "${call.name}". Available tools: ${known}.`),
    };
  }
  let raw: unknown;
  try {
    // JSON escapes can still spell NUL or half a surrogate pair: clean what they decode to.
    raw = cleanJson(call.arguments.trim() === '' ? {} : JSON.parse(call.arguments));
  } catch {
    return {
      ok: false,
      result: await refuse(scope, call, tool.risk, 'the arguments are not valid JSON; send a JSON object.'),
    };
  }
  const parsed = tool.parse(raw);
  if (!parsed.ok)
    return { ok: false, result: await refuse(scope, call, tool.risk, `invalid arguments: ${parsed.error}`) };
  return { ok: true, tool, input: parsed.value };
}

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
 * last, together.
 */
export async function resolveToolCalls(
  scope: ToolScope,
  calls: readonly ToolCall[],
  previous: readonly ToolResult[],
  parked: readonly ParkedRun[] = [],
): Promise<Resolution> {
  const results = [...previous];
  const resolved = new Set([
    ...previous.map((result) => result.toolCallId),
    ...parked.map((run) => run.frame.delegateCallId),
  ]);
  const pending: PendingCall[] = [];
  const delegations: ToolCall[] = [];
  const waiting = [...parked];
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
    results.push({ toolCallId: call.id, content: outcome.content });
  }
  if (scope.delegation && delegations.length > 0) {
    for (const outcome of await scope.delegation.run(scope, delegations)) {
      if (outcome.status === 'done') results.push(outcome.result);
      else waiting.push(outcome.run);
    }
  }
  pending.push(...waiting.flatMap((run) => run.pending));
  return pending.length > 0
    ? { status: 'needs_approval', results, pending, agents: waiting.map((run) => run.frame) }
    : { status: 'complete', results };
}
