import { ModelError } from '../contracts/errors.js';
import { type ConversationMessage, keptMessages, type ToolCall } from '../contracts/messages.js';
import type { TokenUsage } from '../contracts/observer.js';
import type { AgentFrame, ApprovalRecord } from '../contracts/store.js';
import { cleanText } from '../text/index.js';
import {
  inCallOrder,
  type ParkedRun,
  type Resolution,
  resolveToolCalls,
  type ToolResult,
  type ToolScope,
} from '../tool-calls/index.js';
import type { AgentSpec } from './agent-spec.js';

/**
 * One run of a sub-agent: its own model loop over its own tools, from the task (or from where it parked)
 * to an answer for Butler, a park on an approval, or a failure Butler is told about.
 */

export type AgentRunResult =
  | { status: 'done'; answer: string }
  | { status: 'parked'; run: ParkedRun }
  | { status: 'failed'; error: string };

/** What a run used: model calls (across parks) and tokens (this run only). */
export interface RunTally extends TokenUsage {
  steps: number;
}

export interface AgentRunState {
  frame: Omit<AgentFrame, 'assistant' | 'results' | 'approved'>;
  /**
   * Continuing after decisions or a connection: the step that waited, the results it had, and the decisions
   * taken on its calls since.
   */
  waited?: {
    assistant: AgentFrame['assistant'];
    results: ToolResult[];
    approvals: readonly ApprovalRecord[];
  };
}

function systemPrompt(spec: AgentSpec): string {
  return [
    spec.instructions.trim(),
    `You are the "${spec.name}" agent. Butler, the team's assistant, gives you a task on someone's behalf. Do it with your tools, then answer Butler with the result: the facts, what you did, and anything that failed. Butler writes the reply the person sees.`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The first message of a run: the task and what Butler passed on. */
export function taskMessage(task: string, context: string | undefined): ConversationMessage {
  const content = context ? `${task}\n\nContext from Butler:\n${context}` : task;
  return { role: 'user', content };
}

const toolMessages = (calls: readonly ToolCall[], results: readonly ToolResult[]): ConversationMessage[] =>
  inCallOrder(calls, results).map((result) => ({ role: 'tool', ...result }));

/**
 * Runs `spec` from `state` under `scope` (the agent's tools, observer and signal). `tally` counts the
 * model calls (from the state's count) and collects the
 * tokens of every model call. Errors of the model or the run's deadline become a failed result; a
 * shutdown (the turn's own signal) propagates.
 */
export async function runAgent(
  spec: AgentSpec,
  scope: ToolScope,
  state: AgentRunState,
  tally: RunTally,
): Promise<AgentRunResult> {
  const messages = [...state.frame.messages];
  tally.steps = state.frame.steps;
  const park = (assistant: AgentFrame['assistant'], parked: Resolution): AgentRunResult => {
    const frame = { ...state.frame, messages, steps: tally.steps, assistant, results: parked.results };
    if (parked.status === 'needs_connection')
      return {
        status: 'parked',
        run: {
          frame: parked.approved.length > 0 ? { ...frame, approved: parked.approved } : frame,
          pending: [],
          need: parked.need,
        },
      };
    const pending = parked.status === 'needs_approval' ? parked.pending : [];
    return {
      status: 'parked',
      run: {
        frame,
        pending: pending.map((call) => ({
          ...call,
          agent: { name: spec.name, delegateCallId: state.frame.delegateCallId },
        })),
      },
    };
  };

  if (state.waited) {
    const { assistant, results, approvals } = state.waited;
    const resolution = await resolveToolCalls(scope, assistant.toolCalls, results, [], approvals);
    if (resolution.status !== 'complete') return park(assistant, resolution);
    messages.push(
      { role: 'assistant', ...assistant },
      ...toolMessages(assistant.toolCalls, resolution.results),
    );
  }
  while (tally.steps < spec.maxSteps) {
    const result = await spec.model.complete({
      messages: [{ role: 'system', content: systemPrompt(spec) }, ...messages],
      tools: scope.tools.definitions(),
      signal: scope.signal,
    });
    tally.steps++;
    tally.promptTokens += result.usage?.promptTokens ?? 0;
    tally.completionTokens += result.usage?.completionTokens ?? 0;
    scope.observer.generation({
      name: 'chat',
      model: result.model,
      startTime: result.startTime,
      endTime: result.endTime,
      ...(result.firstTokenTime ? { firstTokenTime: result.firstTokenTime } : {}),
      input: keptMessages(messages),
      output:
        result.toolCalls.length > 0
          ? { content: result.content, toolCalls: result.toolCalls }
          : result.content,
      ...(result.usage ? { usage: result.usage } : {}),
    });
    if (result.toolCalls.length === 0) {
      const answer = cleanText(result.content).trim();
      return { status: 'done', answer: answer || '(the agent gave no answer)' };
    }
    const assistant = { content: result.content, toolCalls: result.toolCalls };
    const resolution = await resolveToolCalls(scope, result.toolCalls, []);
    if (resolution.status !== 'complete') return park(assistant, resolution);
    messages.push({ role: 'assistant', ...assistant }, ...toolMessages(result.toolCalls, resolution.results));
  }
  return { status: 'failed', error: `it stopped after ${spec.maxSteps} steps without finishing` };
}

/** Why a run failed, in words for Butler's model; rethrows a shutdown. */
export function failureText(error: unknown, spec: AgentSpec, timedOut: boolean): string {
  if (timedOut) return `it did not finish within ${Math.round(spec.timeoutMs / 1000)} s`;
  if (error instanceof ModelError) return `its model failed (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
