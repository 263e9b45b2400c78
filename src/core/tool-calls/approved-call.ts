import type { ConnectionNeededError } from '../contracts/connection-needed.js';
import type { InputNeededError } from '../contracts/input-needed.js';
import type { ToolCall } from '../contracts/messages.js';
import type { ApprovalRecord, ApprovedWait, Store } from '../contracts/store.js';
import { recordNotRun, runTool, validateCall } from './run.js';
import type { ToolResult, ToolScope } from './scope.js';

/** The call an approval is about, in the model step that asked for it (Butler's, or a sub-agent's). */
export function approvedCall(approval: ApprovalRecord, step: { toolCalls: readonly ToolCall[] }): ToolCall {
  const call = step.toolCalls.find((candidate) => candidate.id === approval.toolCallId);
  if (!call) throw new Error(`approval ${approval.id} points at a missing tool call`);
  return call;
}

/** The approvals of calls that waited, approved, for a connection (a deleted one is left out). */
export async function waitingApprovals(
  store: Store,
  waits: readonly ApprovedWait[],
): Promise<ApprovalRecord[]> {
  const found = await Promise.all(waits.map((wait) => store.approvals.get(wait.approvalId)));
  return found.filter((approval): approval is ApprovalRecord => approval !== undefined);
}

/**
 * The result of `call`, which `approval` was about, for the model: the tool's output when approved
 * (run at most once, even across restarts and racing workers), or why it did not run.
 */
export async function resolveApprovedCall(
  scope: ToolScope,
  approval: ApprovalRecord,
  call: ToolCall,
): Promise<
  | ToolResult
  | { toolCallId: string; needs: ConnectionNeededError }
  | { toolCallId: string; asks: InputNeededError }
> {
  const decidedBy = approval.decidedBy ? (approval.decidedBy.name ?? approval.decidedBy.id) : null;
  const notRun = {
    call,
    risk: approval.risk,
    approvalId: approval.id,
    decidedBy: approval.decidedBy?.id ?? null,
    arguments: approval.arguments,
  };

  if (approval.status === 'rejected') {
    await recordNotRun(scope, { ...notRun, decision: 'rejected' });
    const reason = approval.reason ? ` with the reason: "${approval.reason}"` : ' (no reason given)';
    return {
      toolCallId: call.id,
      content: `Rejected by ${decidedBy ?? 'an approver'}${reason}. The tool was not run.`,
    };
  }
  if (approval.status !== 'approved') {
    await recordNotRun(scope, { ...notRun, decision: 'expired' });
    return {
      toolCallId: call.id,
      content: `Nobody decided on the approval request before it expired at ${approval.expiresAt.toISOString()}. The tool was not run.`,
    };
  }

  if (!(await scope.store.approvals.beginExecution(approval.id))) {
    const current = await scope.store.approvals.get(approval.id);
    return {
      toolCallId: call.id,
      content:
        current?.result ??
        'The tool was started, but Butler restarted before it reported a result, so its outcome is unknown. Check its effect before trying again.',
    };
  }
  // Right after a restart an MCP server may still be connecting: its tools exist once it has.
  await scope.tools.settled();
  if (!scope.tools.get(call.name)) {
    const gone = `The tool ${call.name} is no longer available (its MCP server is down, or no longer offers it, or the configuration changed), so it was not run although it was approved.`;
    await scope.store.approvals.finishExecution(approval.id, 'skipped', gone);
    await recordNotRun(scope, { ...notRun, decision: 'approved', error: 'tool no longer available' });
    return { toolCallId: call.id, content: gone };
  }
  // Validate again: the configuration may have changed while the request waited.
  const checked = await validateCall(scope, { ...call, arguments: JSON.stringify(approval.arguments) });
  if (!checked.ok) {
    await scope.store.approvals.finishExecution(approval.id, 'skipped', checked.result.content);
    return checked.result;
  }
  const outcome = await runTool(scope, {
    tool: checked.tool,
    call,
    arguments: checked.input,
    decision: 'approved',
    approvalId: approval.id,
    decidedBy: approval.decidedBy?.id ?? null,
  });
  if (outcome.needs) {
    // It did not run: it may still run once, after the person connects.
    await scope.store.approvals.releaseExecution(approval.id);
    return { toolCallId: call.id, needs: outcome.needs };
  }
  if (outcome.asks) {
    // Not finished: it is made again, once, with the person's answers.
    await scope.store.approvals.releaseExecution(approval.id);
    return { toolCallId: call.id, asks: outcome.asks };
  }
  await scope.store.approvals.finishExecution(
    approval.id,
    outcome.ok ? 'succeeded' : 'failed',
    // A result the model alone may read is stored as what is kept of it, and replayed so after a restart.
    outcome.kept ?? outcome.content,
  );
  return {
    toolCallId: call.id,
    content: outcome.content,
    ...(outcome.kept === undefined ? {} : { kept: outcome.kept }),
  };
}
