import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../contracts/logger.js';
import type { ConversationMessage } from '../contracts/messages.js';
import type { StepObserver, TokenUsage } from '../contracts/observer.js';
import type { RoutingIntent, RoutingRecord, Store } from '../contracts/store.js';
import type { ModelClient } from '../model/model-client.js';
import { type AgentSpec, delegateToolName } from './agent-spec.js';

/**
 * The optional pre-turn routing decision: a cheap model classifies the request as structured output,
 * validated with zod. A confident `delegate` goes straight to that agent, `clarify` has Butler ask a
 * question; anything invalid, slow or failing leaves the turn as it would have been. Every decision is
 * stored, logged and traced, so an admin can see why Butler did what it did.
 */

const intents = [
  'direct_answer',
  'delegate',
  'clarify',
  'cannot_help',
] as const satisfies readonly RoutingIntent[];

/** What the model is asked for (strict structured output wants every field, so `agent` is nullable). */
const wireDecision = z.strictObject({
  intent: z.enum(intents),
  agent: z.string().nullable(),
  confidence: z.number(),
  reasoning: z.string(),
});
const decisionSchema = wireDecision.extend({ confidence: z.number().min(0).max(1) });
type RoutingDecision = z.infer<typeof decisionSchema>;

const { $schema: _dialect, ...decisionJsonSchema } = z.toJSONSchema(wireDecision);

/** What the turn does with the decision. */
export type Route =
  | { action: 'delegated'; agent: string; task: string; context?: string }
  | { action: 'clarify' | 'answer'; note?: string }
  | { action: 'fallback' };

export interface RouterOptions {
  /** A `delegate` decision below this is left to Butler's own model. */
  minConfidence: number;
  timeoutMs: number;
}

/** Messages of the conversation shown to the router, newest last; older ones add little to a classification. */
const transcriptMessages = 8;
const transcriptChars = 4000;
const contextChars = 1500;

function transcript(messages: readonly ConversationMessage[]): string[] {
  return messages
    .filter((message) => message.role === 'user' || (message.role === 'assistant' && message.content))
    .slice(-transcriptMessages)
    .map((message) =>
      message.role === 'user'
        ? `${message.author ?? 'Person'}: ${message.content}`
        : `Butler: ${message.content}`,
    );
}

/** Tolerant parsing: a bare object, one in a code fence, or the first `{…}` in the text. */
export function parseDecisionText(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1] ?? text;
  const start = fenced.indexOf('{');
  const end = fenced.lastIndexOf('}');
  if (start === -1 || end < start) throw new Error('no JSON object in the answer');
  return JSON.parse(fenced.slice(start, end + 1));
}

/** The step a confident routing decision stands for: Butler delegating the person's request as it is. */
export function routedStep(route: Extract<Route, { action: 'delegated' }>) {
  const { agent, task, context } = route;
  return {
    content: '',
    toolCalls: [
      {
        id: `call_route_${randomUUID().slice(0, 8)}`,
        name: delegateToolName,
        arguments: JSON.stringify(context ? { agent, task, context } : { agent, task }),
      },
    ],
  };
}

export class Router {
  constructor(
    private readonly model: ModelClient,
    private readonly agents: readonly AgentSpec[],
    private readonly store: Store,
    private readonly options: RouterOptions,
  ) {}

  async route(input: {
    conversationKey: string;
    turnId: string;
    /** Recent history and the turn's new messages, oldest first. */
    messages: readonly ConversationMessage[];
    signal: AbortSignal;
    observer: StepObserver;
    logger: Logger;
    /** The routing model's tokens, counted with the turn's (usage and budgets). */
    addUsage: (usage: TokenUsage) => void;
  }): Promise<Route> {
    const startTime = new Date();
    const lines = transcript(input.messages);
    const roster = this.agents.map((agent) => `- ${agent.name}: ${agent.description}`).join('\n');
    const prompt = [
      {
        role: 'system' as const,
        content: `You route requests for Butler, a team assistant that can answer itself or hand a task to a specialist agent.\n\nAgents:\n${roster}\n\nClassify the person's last message. intent: direct_answer (Butler answers itself), delegate (one agent should do it; set agent), clarify (too unclear to act on), cannot_help (neither Butler nor the agents can). confidence: 0 to 1. reasoning: one sentence. Answer with the JSON object only.`,
      },
      { role: 'user' as const, content: lines.join('\n').slice(-transcriptChars) },
    ];
    let decision: RoutingDecision | undefined;
    let error: string | undefined;
    let content: string | undefined;
    let usage: TokenUsage | undefined;
    try {
      const result = await this.model.complete({
        messages: prompt,
        responseSchema: { name: 'routing_decision', schema: decisionJsonSchema },
        signal: AbortSignal.any([input.signal, AbortSignal.timeout(this.options.timeoutMs)]),
      });
      content = result.content;
      usage = result.usage;
      if (usage) input.addUsage(usage);
      decision = this.validate(parseDecisionText(result.content));
    } catch (caught) {
      if (input.signal.aborted) throw caught;
      error = caught instanceof Error ? caught.message : String(caught);
    }
    const route = decision ? this.toRoute(decision, input.messages) : ({ action: 'fallback' } as const);
    const endTime = new Date();
    input.observer.generation({
      name: 'routing',
      model: this.model.model,
      startTime,
      endTime,
      input: prompt,
      output: decision ?? content ?? null,
      ...(usage ? { usage } : {}),
      ...(error ? { error } : {}),
    });
    const record: RoutingRecord = {
      conversationKey: input.conversationKey,
      turnId: input.turnId,
      intent: decision?.intent ?? null,
      agent: decision?.agent ?? null,
      confidence: decision?.confidence ?? null,
      reasoning: decision?.reasoning ?? null,
      action: route.action,
      error: error ?? null,
      model: this.model.model,
      durationMs: endTime.getTime() - startTime.getTime(),
    };
    if (error) input.logger.warn({ error, action: route.action }, 'routing failed; answering as usual');
    else
      input.logger.info(
        { intent: record.intent, agent: record.agent, confidence: record.confidence, action: route.action },
        'routing decision',
      );
    await this.store.routing
      .record(record)
      .catch((caught: unknown) =>
        input.logger.error({ err: caught }, 'could not record the routing decision'),
      );
    return route;
  }

  private validate(raw: unknown): RoutingDecision {
    const parsed = decisionSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(
        `invalid decision: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    const decision = parsed.data;
    if (decision.intent === 'delegate' && !this.agents.some((agent) => agent.name === decision.agent))
      throw new Error(`invalid decision: unknown agent "${decision.agent ?? ''}"`);
    return decision;
  }

  private toRoute(decision: RoutingDecision, messages: readonly ConversationMessage[]): Route {
    const reason = decision.reasoning.trim();
    switch (decision.intent) {
      case 'delegate': {
        const last = messages.at(-1);
        if (decision.confidence < this.options.minConfidence || !decision.agent || last?.role !== 'user')
          return { action: 'answer' };
        const earlier = transcript(messages.slice(0, -1)).join('\n').slice(-contextChars);
        return {
          action: 'delegated',
          agent: decision.agent,
          task: last.content,
          ...(earlier ? { context: `Earlier in the conversation:\n${earlier}` } : {}),
        };
      }
      case 'clarify':
        return {
          action: 'clarify',
          note: `A routing step found the request unclear${reason ? ` (${reason})` : ''}. Ask the person one short clarifying question before acting.`,
        };
      case 'cannot_help':
        return {
          action: 'answer',
          note: `A routing step judged this outside what you and your agents can do${reason ? ` (${reason})` : ''}. If you agree, say so briefly and suggest who could help.`,
        };
      default:
        return { action: 'answer' };
    }
  }
}
