import type { Logger } from '../contracts/logger.js';
import type { ToolCall } from '../contracts/messages.js';
import type { TokenUsage, TurnObserver } from '../contracts/observer.js';
import type { AgentFrame, ApprovalRecord, Store } from '../contracts/store.js';
import type { ToolDefinition } from '../model/model-client.js';
import type { Delegation, DelegationOutcome, ToolScope } from '../tool-calls/index.js';
import { waitingApprovals } from '../tool-calls/index.js';
import { toolsOn } from '../tools/platform-tools.js';
import type { ToolSet } from '../tools/registry.js';
import { type AgentRunResult, type AgentRunState, failureText, runAgent, taskMessage } from './agent-run.js';
import { type AgentSpec, delegateToolName } from './agent-spec.js';
import { AgentToolSet } from './agent-tools.js';
import { delegateDefinition, parseDelegation } from './delegate-tool.js';

/**
 * Butler's specialists: the `delegate` tool, the sub-agent runs it starts (several at once, bounded), and
 * their continuation after the approvals they parked on. Each run gets only its tools, its instructions,
 * the task and the context Butler passed; its result comes back to Butler as the tool result.
 */

/** What one turn lends the runs it starts. */
export interface TurnBinding {
  turnId: string;
  observer: TurnObserver;
  /** Shows which agents are busy ("Asking ops…"); never throws. */
  onDelegating(agents: readonly string[]): Promise<void>;
  /** Adds a run's tokens to the turn's (the conversation's cost includes its agents'). */
  addUsage(usage: TokenUsage): void;
}

export class Delegator {
  private readonly agents: ReadonlyMap<string, AgentSpec>;
  private readonly toolSets: ReadonlyMap<string, AgentToolSet>;
  /** The `delegate` tool's definition, for Butler's model. */
  readonly definition: ToolDefinition;

  constructor(
    agents: readonly AgentSpec[],
    tools: ToolSet,
    private readonly store: Store,
    private readonly options: { maxParallel: number },
  ) {
    this.agents = new Map(agents.map((agent) => [agent.name, agent]));
    this.toolSets = new Map(agents.map((agent) => [agent.name, new AgentToolSet(tools, agent.tools)]));
    this.definition = delegateDefinition(agents);
  }

  private withDelegateFor: readonly ToolDefinition[] | undefined;
  private withDelegateList: ToolDefinition[] = [];

  /** Butler's tools plus `delegate`; the registry hands out a new list only when its tools change. */
  withDelegate(definitions: readonly ToolDefinition[]): ToolDefinition[] {
    if (definitions !== this.withDelegateFor) {
      this.withDelegateFor = definitions;
      this.withDelegateList = [...definitions, this.definition];
    }
    return this.withDelegateList;
  }

  /** The delegation port of one turn. */
  forTurn(binding: TurnBinding): Delegation {
    return {
      handles: (call: ToolCall) => call.name === delegateToolName,
      run: (scope, calls) => this.run(binding, scope, calls),
    };
  }

  /**
   * Continues the runs parked in `frames` now that `batch` is decided, or the connection they waited for is
   * made: the approved calls run (once), the rejected and expired ones are reported to the agent, the calls
   * that waited for the connection are resolved again, and each run goes on from there.
   */
  async resume(
    binding: TurnBinding,
    scope: ToolScope,
    frames: readonly AgentFrame[],
    batch: readonly ApprovalRecord[],
  ): Promise<DelegationOutcome[]> {
    await binding.onDelegating(frames.map((frame) => frame.agent));
    return this.bounded(frames, async (frame) => {
      const spec = this.agents.get(frame.agent);
      if (!spec)
        return done(
          frame.delegateCallId,
          `Error: the agent "${frame.agent}" is no longer configured; nothing it asked for was run.`,
        );
      return this.runOne(binding, scope, spec, frame, true, async () => {
        const decided = batch.filter((entry) => entry.agent?.delegateCallId === frame.delegateCallId);
        const approvedBefore = await waitingApprovals(this.store, frame.approved ?? []);
        const { assistant, results, approved: _resolvedNow, ...rest } = frame;
        return { frame: rest, waited: { assistant, results, approvals: [...decided, ...approvedBefore] } };
      });
    });
  }

  private async run(binding: TurnBinding, scope: ToolScope, calls: readonly ToolCall[]) {
    const agents = [...this.agents.values()];
    const parsed = calls.map((call) => ({ call, parsed: parseDelegation(call, agents) }));
    const named = parsed.flatMap((entry) => (entry.parsed.ok ? [entry.parsed.agent.name] : []));
    if (named.length > 0) await binding.onDelegating([...new Set(named)]);
    return this.bounded(parsed, async ({ call, parsed: request }) => {
      if (!request.ok) return done(call.id, `Error: ${request.error}`);
      const { agent, request: delegation } = request;
      const state: AgentRunState = {
        frame: {
          agent: agent.name,
          delegateCallId: call.id,
          task: delegation.task,
          messages: [taskMessage(delegation.task, delegation.context)],
          steps: 0,
        },
      };
      return this.runOne(binding, scope, agent, state.frame, false, async () => state);
    });
  }

  /**
   * One run with its own tools, observer span (the approved calls a continuation runs first are inside it),
   * deadline and usage record.
   */
  private async runOne(
    binding: TurnBinding,
    scope: ToolScope,
    spec: AgentSpec,
    run: Pick<AgentFrame, 'delegateCallId' | 'task' | 'steps'>,
    resumed: boolean,
    start: (agentScope: ToolScope) => Promise<AgentRunState>,
  ): Promise<DelegationOutcome> {
    const startedAt = Date.now();
    const { delegateCallId } = run;
    const deadline = AbortSignal.timeout(spec.timeoutMs);
    const observer = binding.observer.agent({ agent: spec.name, delegateCallId, task: run.task, resumed });
    const { delegation: _noFurther, ...outer } = scope;
    const agentScope: ToolScope = {
      ...outer,
      // Only what works on the conversation's platform, as for Butler's own calls.
      tools: toolsOn(this.toolSets.get(spec.name) as AgentToolSet, scope.address.platform),
      observer,
      agent: spec.name,
      // A sub-agent reads Butler's words, not the person's: its personal calls need confirmation.
      afterToolOutput: true,
      signal: AbortSignal.any([scope.signal, deadline]),
      logger: scope.logger.child({ agent: spec.name }),
    };
    const tally = { promptTokens: 0, completionTokens: 0, steps: run.steps };
    let result: AgentRunResult;
    try {
      result = await runAgent(spec, agentScope, await start(agentScope), tally);
    } catch (error) {
      if (scope.signal.aborted) throw error;
      result = { status: 'failed', error: failureText(error, spec, deadline.aborted) };
    }
    const { steps, ...usage } = tally;
    binding.addUsage(usage);
    await this.record(agentScope.logger, {
      conversationKey: scope.conversationKey,
      turnId: binding.turnId,
      agent: spec.name,
      delegateCallId,
      status: result.status,
      steps,
      ...usage,
      error: result.status === 'failed' ? result.error : null,
      durationMs: Date.now() - startedAt,
    });
    observer.end({
      status: result.status,
      steps,
      usage,
      ...(result.status === 'done' ? { output: result.answer } : {}),
      ...(result.status === 'failed' ? { error: result.error } : {}),
    });
    if (result.status === 'parked') return { status: 'parked', run: result.run };
    if (result.status === 'failed') {
      agentScope.logger.warn({ error: result.error }, 'sub-agent failed');
      return done(delegateCallId, `Error: the ${spec.name} agent failed: ${result.error}.`);
    }
    return done(delegateCallId, result.answer);
  }

  private async record(logger: Logger, run: Parameters<Store['agentRuns']['record']>[0]) {
    try {
      await this.store.agentRuns.record(run);
    } catch (error) {
      logger.error({ err: error }, 'could not record the sub-agent run');
    }
  }

  /** Maps `items` with at most `maxParallel` running at once; results in the items' order. */
  private async bounded<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = new Array(items.length);
    let next = 0;
    const lanes = Array.from({ length: Math.min(this.options.maxParallel, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    });
    await Promise.all(lanes);
    return results;
  }
}

function done(toolCallId: string, content: string): DelegationOutcome {
  return { status: 'done', result: { toolCallId, content } };
}
