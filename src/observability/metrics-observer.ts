import { performance } from 'node:perf_hooks';
import { Counter, Histogram, type Registry } from 'prom-client';
import { decodeConversationKey } from '../core/contracts/conversation-key.js';
import type {
  AgentObserver,
  GenerationRecord,
  Observer,
  StepObserver,
  ToolCallRecord,
  TurnObserver,
} from '../core/contracts/observer.js';

/**
 * Counts and times what the core reports to observers, for `/metrics`: turns, model calls and their tokens,
 * tool calls, approvals. Counters and histograms only, with labels from small fixed sets (platform, outcome,
 * configured model, risk, decision, tool name up to a cap): never a conversation, user, id or argument.
 */

/** Past this many distinct tool names (MCP servers can offer hundreds), calls count under `otherLabel`. */
export const maxToolLabels = 100;
/** Outside the tool-name and workspace-id alphabets, so no real tool or workspace shares it. */
export const otherLabel = '(other)';
/**
 * Past this many workspaces (anyone may add Butler to theirs when installs are open), turns count under
 * workspace="(other)": a label's values stay bounded whoever installs it.
 */
export const maxWorkspaceLabels = 100;

/** The first `max` distinct values are labels of their own; later ones share `otherLabel`. */
function boundedLabels(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return otherLabel;
    seen.add(value);
    return value;
  };
}

/** Seconds: a turn runs from a quick answer to minutes of tool calls and approvals. */
const turnBuckets = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];
const modelBuckets = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

const seconds = (start: Date, end: Date) => Math.max(0, end.getTime() - start.getTime()) / 1000;

export function createMetricsObserver(registry: Registry): Observer {
  const registers = [registry];
  const turns = new Counter({
    name: 'butler_turns_total',
    help: `Turns finished, by platform, workspace (Slack team, Feishu tenant; past ${maxWorkspaceLabels}, "${otherLabel}"), trigger (message or resume) and outcome (replied, parked, failed).`,
    labelNames: ['platform', 'workspace', 'trigger', 'outcome'] as const,
    registers,
  });
  const turnDuration = new Histogram({
    name: 'butler_turn_duration_seconds',
    help: 'Time from the start of a turn to its reply, park or failure.',
    labelNames: ['platform', 'outcome'] as const,
    buckets: turnBuckets,
    registers,
  });
  const modelDuration = new Histogram({
    name: 'butler_model_request_duration_seconds',
    help: 'Model calls by configured model, purpose (chat, compaction, routing) and outcome (ok, error).',
    labelNames: ['model', 'purpose', 'outcome'] as const,
    buckets: modelBuckets,
    registers,
  });
  const modelTokens = new Counter({
    name: 'butler_model_tokens_total',
    help: 'Tokens the model reported, by model, purpose and kind (prompt, completion).',
    labelNames: ['model', 'purpose', 'kind'] as const,
    registers,
  });
  const toolCalls = new Counter({
    name: 'butler_tool_calls_total',
    help: `Tool calls by tool and decision; past ${maxToolLabels} tool names, and refused calls, under tool="${otherLabel}".`,
    labelNames: ['tool', 'decision'] as const,
    registers,
  });
  const approvalsRequested = new Counter({
    name: 'butler_approvals_requested_total',
    help: 'Approval requests (one per tool call on a card), by risk.',
    labelNames: ['risk'] as const,
    registers,
  });
  const approvalsDecided = new Counter({
    name: 'butler_approvals_decided_total',
    help: 'Approval decisions taken, by risk and decision.',
    labelNames: ['risk', 'decision'] as const,
    registers,
  });
  const approvalsCounted = new Counter({
    name: 'butler_approvals_counted_total',
    help: 'Approvals counted toward a quorum that still needed more approvers, by risk.',
    labelNames: ['risk'] as const,
    registers,
  });
  const approvalsExpired = new Counter({
    name: 'butler_approvals_expired_total',
    help: 'Approval requests that expired undecided, by risk.',
    labelNames: ['risk'] as const,
    registers,
  });

  const toolName = boundedLabels(maxToolLabels);
  // A refused call may name a tool the model made up: its name is not a label.
  const toolLabel = (record: ToolCallRecord): string =>
    record.decision === 'invalid' ? otherLabel : toolName(record.toolName);
  const workspaceLabel = boundedLabels(maxWorkspaceLabels);

  const steps: StepObserver = {
    generation(record: GenerationRecord) {
      const model = record.model;
      const purpose = record.name;
      modelDuration.observe(
        { model, purpose, outcome: record.error === undefined ? 'ok' : 'error' },
        seconds(record.startTime, record.endTime),
      );
      if (!record.usage) return;
      modelTokens.inc({ model, purpose, kind: 'prompt' }, record.usage.promptTokens);
      modelTokens.inc({ model, purpose, kind: 'completion' }, record.usage.completionTokens);
    },
    toolCall(record: ToolCallRecord) {
      toolCalls.inc({ tool: toolLabel(record), decision: record.decision });
    },
  };
  // A sub-agent's model and tool calls count like Butler's own.
  const agentObserver: AgentObserver = { ...steps, end: () => {} };

  return {
    startTurn(turn) {
      const started = performance.now();
      const observer: TurnObserver = {
        ...steps,
        approvalRequested: (approval) => approvalsRequested.inc({ risk: approval.risk }),
        compaction: () => {},
        agent: () => agentObserver,
        end(outcome) {
          const workspace = workspaceLabel(decodeConversationKey(turn.conversationKey).workspace);
          turns.inc({ platform: turn.platform, workspace, trigger: turn.trigger, outcome: outcome.status });
          turnDuration.observe(
            { platform: turn.platform, outcome: outcome.status },
            (performance.now() - started) / 1000,
          );
        },
      };
      return observer;
    },
    approvalDecided: (approval) => approvalsDecided.inc({ risk: approval.risk, decision: approval.decision }),
    approvalExpired: (approval) => approvalsExpired.inc({ risk: approval.risk }),
    approvalVoted: (approval) => approvalsCounted.inc({ risk: approval.risk }),
    flush: async () => {},
    shutdown: async () => {},
  };
}
