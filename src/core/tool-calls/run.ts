import { ConnectionNeededError } from '../contracts/connection-needed.js';
import { errorText } from '../contracts/errors.js';
import { InputNeededError } from '../contracts/input-needed.js';
import type { ToolCall } from '../contracts/messages.js';
import type { AuditEntry } from '../contracts/store.js';
import { cleanJson, cleanText } from '../text/index.js';
import type { Tool, ToolContext, ToolOutput } from '../tools/tool.js';
import type { ToolResult, ToolScope } from './scope.js';

/** One call at a time: validate it, run it, or record why it did not run; every path is audited and traced. */

type Decision = Exclude<AuditEntry['decision'], 'answered'>;

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
      scheduleId: scope.scheduleId ?? null,
      profile: scope.profile ?? null,
    });
  } catch (error) {
    scope.logger.error({ err: error, tool: entry.toolName }, 'audit write failed');
  }
}

/** Rejects a call before anything runs; the model reads the reason and may try again. */
export async function refuse(
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

/** The model's text of a tool's output: its text, then a line for each file it sent. */
async function withFiles(scope: ToolScope, tool: Tool, callId: string, output: ToolOutput): Promise<string> {
  if (typeof output === 'string') return output;
  if (!('files' in output)) return output.text;
  const lines = scope.deliverFiles
    ? await scope.deliverFiles(callId, output.files, tool.origin ? 'tool' : 'model')
    : output.files.map((file) => `[file not sent (no conversation to send it to): ${file.name}]`);
  return [output.text, ...lines].filter((line) => line.length > 0).join('\n');
}

/** How a call went: its output for the model, and, when it needs a connection first, what to connect. */
export interface RunOutcome {
  content: string;
  /** What is kept of `content` after the turn, when the model alone may read it (`ToolOutput`). */
  kept?: string;
  ok: boolean;
  /** Nothing ran: the call waits until the person connects (or authorizes a scope the server asked for). */
  needs?: ConnectionNeededError;
  /** The server did not finish: it asks the requester for input, and the call is made again with the answers. */
  asks?: InputNeededError;
}

/**
 * Runs a validated call; a throwing tool becomes an error result for the model, except one that says it needs a
 * connection first (it did not run: the caller parks it). Always audited.
 */
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
): Promise<RunOutcome> {
  const { tool, call } = input;
  if (scope.signal.aborted) {
    // Stopped (or shutting down) before this call started: it never starts.
    const reason = 'the turn was stopped before this call ran';
    await auditNotRun(scope, input, reason);
    return { content: `Error: ${reason}`, ok: false };
  }
  await scope.report?.({ type: 'tool_call', id: call.id, name: tool.name, args: input.arguments });
  const startTime = new Date();
  let content: string;
  let kept: string | undefined;
  let error: string | null = null;
  try {
    const output = await tool.execute(input.arguments, {
      address: scope.address,
      conversationKey: scope.conversationKey,
      requester: scope.requester,
      requesters: scope.requesters,
      ...(scope.replyTo ? { replyTo: scope.replyTo } : {}),
      isDirect: scope.isDirect,
      ...(scope.scheduleId ? { scheduleId: scope.scheduleId } : {}),
      callId: call.id,
      signal: scope.signal,
      logger: scope.logger.child({ tool: tool.name }),
      ...(scope.grant ? { grant: scope.grant } : {}),
      ...(scope.messageSearch ? { messageSearch: scope.messageSearch } : {}),
      ...(answerOf(scope, call.id) ?? {}),
      ...askerOf(scope, tool.name, call.id),
    });
    content = cleanText(await withFiles(scope, tool, call.id, output));
    if (typeof output !== 'string' && 'kept' in output) kept = cleanText(output.kept);
  } catch (caught) {
    if (caught instanceof ConnectionNeededError) return waitsForConnection(scope, input, caught);
    if (caught instanceof InputNeededError) return waitsForInput(scope, input, caught);
    error = cleanText(errorText(caught));
    content = `Error: the tool failed: ${error}`;
  }
  const endTime = new Date();
  const shown = kept ?? content;
  await scope.report?.({ type: 'tool_result', id: call.id, name: tool.name, output: shown, error });
  scope.observer.toolCall({
    toolName: tool.name,
    callId: call.id,
    risk: tool.risk,
    decision: input.decision,
    startTime,
    endTime,
    input: input.arguments,
    output: shown,
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
  return { content, ...(kept === undefined ? {} : { kept }), ok: error === null };
}

/** A call that did not run because it needs a connection first: audited as not run, and handed back to park. */
/** The audit row of a call that did not run (stopped first, or waiting for a connection or an answer). */
function auditNotRun(scope: ToolScope, input: Parameters<typeof runTool>[1], error: string): Promise<void> {
  const { tool, call } = input;
  return audit(scope, {
    approvalId: input.approvalId,
    grantId: input.grantId ?? null,
    toolName: tool.name,
    toolCallId: call.id,
    arguments: input.arguments,
    risk: tool.risk,
    decision: input.decision,
    outcome: 'not_run',
    decidedBy: input.decidedBy,
    error,
    durationMs: 0,
  });
}

async function waitsForConnection(
  scope: ToolScope,
  input: Parameters<typeof runTool>[1],
  needs: ConnectionNeededError,
): Promise<RunOutcome> {
  await auditNotRun(scope, input, needs.message);
  return { content: `Error: ${needs.message}`, ok: false, needs };
}

/** How a call asks its requester mid-call: a sub-agent's calls have nobody to ask (their questions are declined). */
function askerOf(scope: ToolScope, toolName: string, callId: string): Pick<ToolContext, 'ask'> {
  const { ask } = scope;
  if (!ask || scope.agent) return {};
  return { ask: (server, request, signal) => ask({ server, toolName, callId }, request, signal) };
}

const answerOf = (scope: ToolScope, callId: string) => {
  const answer = scope.answers?.get(callId);
  return answer ? { answer } : undefined;
};

/**
 * A call whose server asks for input first: audited as not (yet) run, then handed back to park, or, in a
 * sub-agent (which has nobody to ask), an error for its model.
 */
async function waitsForInput(
  scope: ToolScope,
  input: Parameters<typeof runTool>[1],
  asks: InputNeededError,
): Promise<RunOutcome> {
  const { tool } = input;
  const asked = asks.requests.map((request) => request.message).join(' / ');
  await auditNotRun(scope, input, `${asks.server} asked for input: ${asked}`);
  if (scope.agent)
    return {
      content: `Error: ${asks.server} asked the person for input ("${asked}"), which Butler asks only for calls made in the conversation itself, so ${tool.name} did not finish.`,
      ok: false,
    };
  return { content: `Error: ${asks.message}`, ok: false, asks };
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
