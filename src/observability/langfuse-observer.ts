import { LangfuseOtelSpanAttributes } from '@langfuse/core';
import { LangfuseSpanProcessor } from '@langfuse/otel';
import {
  type LangfuseAgent,
  type LangfuseSpan,
  setLangfuseTracerProvider,
  startObservation,
} from '@langfuse/tracing';
import type { SpanContext } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../core/contracts/logger.js';
import type {
  AgentInfo,
  AgentObserver,
  AgentOutcome,
  ApprovalRecordInfo,
  CompactionRecord,
  GenerationRecord,
  InputQuestionInfo,
  Observer,
  ToolCallRecord,
  TurnInfo,
  TurnObserver,
} from '../core/contracts/observer.js';
import { createScoreSender, turnTraceParent } from './langfuse-scores.js';

/**
 * Langfuse over OpenTelemetry: one trace per turn (session = conversation key, user = platform user),
 * generations with token usage, spans for tools, approvals and compaction, and an `agent` observation
 * per delegated sub-agent run with its own generations and tools beneath it. The provider is private to
 * Butler (no global registration); children attach to the turn through explicit parent contexts. A turn's
 * trace id comes from its id, so a rating of its reply becomes a score on it.
 */

export interface LangfuseObserverOptions {
  publicKey: string;
  secretKey: string;
  baseUrl: string;
  serviceName: string;
  logger: Logger;
  /** Export each span as it ends (tests); default batches. */
  exportMode?: 'immediate' | 'batched';
}

function traceAttributes(span: LangfuseSpan, sessionId: string, userId: string) {
  span.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_SESSION_ID, sessionId);
  span.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_USER_ID, userId);
}

/** Where a child observation attaches: the turn's root span or a sub-agent's span. */
interface Parent {
  parentSpanContext: SpanContext;
}

function recordGeneration(record: GenerationRecord, parent: Parent): void {
  const generation = startObservation(
    `llm.${record.name}`,
    {
      model: record.model,
      input: record.input,
      output: record.output,
      ...(record.firstTokenTime ? { completionStartTime: record.firstTokenTime } : {}),
      ...(record.usage
        ? {
            usageDetails: {
              input: record.usage.promptTokens,
              output: record.usage.completionTokens,
              total: record.usage.promptTokens + record.usage.completionTokens,
            },
          }
        : {}),
      ...(record.error ? { level: 'ERROR' as const, statusMessage: record.error } : {}),
    },
    { asType: 'generation', startTime: record.startTime, ...parent },
  );
  generation.end(record.endTime);
}

function recordToolCall(record: ToolCallRecord, parent: Parent): void {
  const tool = startObservation(
    `tool.${record.toolName}`,
    {
      input: record.input,
      output: record.output,
      metadata: { callId: record.callId, risk: record.risk, decision: record.decision },
      ...(record.error ? { level: 'ERROR' as const, statusMessage: record.error } : {}),
    },
    { asType: 'tool', startTime: record.startTime, ...parent },
  );
  tool.end(record.endTime);
}

/** A sub-agent's run as an `agent` observation under the turn; its steps nest under it. */
class LangfuseAgentRun implements AgentObserver {
  private readonly span: LangfuseAgent;

  constructor(info: AgentInfo, parent: Parent) {
    this.span = startObservation(
      `agent.${info.agent}`,
      { input: info.task, metadata: { delegateCallId: info.delegateCallId, resumed: info.resumed } },
      { asType: 'agent', ...parent },
    );
  }

  private get parent(): Parent {
    return { parentSpanContext: this.span.otelSpan.spanContext() };
  }

  generation(record: GenerationRecord): void {
    recordGeneration(record, this.parent);
  }

  toolCall(record: ToolCallRecord): void {
    recordToolCall(record, this.parent);
  }

  end(outcome: AgentOutcome): void {
    this.span.update({
      output: { status: outcome.status, steps: outcome.steps, output: outcome.output },
      metadata: {
        promptTokens: outcome.usage.promptTokens,
        completionTokens: outcome.usage.completionTokens,
      },
      ...(outcome.error ? { level: 'ERROR' as const, statusMessage: outcome.error } : {}),
    });
    this.span.end();
  }
}

class LangfuseTurn implements TurnObserver {
  private readonly root: LangfuseSpan;

  constructor(turn: TurnInfo, serviceName: string) {
    this.root = startObservation(
      `butler.turn`,
      {
        input: { trigger: turn.trigger, ...(turn.scheduleId ? { scheduleId: turn.scheduleId } : {}) },
        metadata: {
          turnId: turn.turnId,
          platform: turn.platform,
          service: serviceName,
          ...(turn.scheduleId ? { scheduleId: turn.scheduleId } : {}),
          ...(turn.profile ? { profile: turn.profile } : {}),
        },
      },
      { parentSpanContext: turnTraceParent(turn.turnId) },
    );
    traceAttributes(this.root, turn.conversationKey, turn.userId);
    // A scheduled run's traces are found by their task: tagged, with the task id in the trace's metadata.
    if (turn.scheduleId) {
      this.root.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_TAGS, ['scheduled']);
      this.root.otelSpan.setAttribute(
        `${LangfuseOtelSpanAttributes.TRACE_METADATA}.scheduleId`,
        turn.scheduleId,
      );
    }
    // A channel's traces are found by its profile, in the trace's metadata.
    if (turn.profile)
      this.root.otelSpan.setAttribute(`${LangfuseOtelSpanAttributes.TRACE_METADATA}.profile`, turn.profile);
    this.root.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_NAME, `butler.turn.${turn.trigger}`);
  }

  private get parent(): Parent {
    return { parentSpanContext: this.root.otelSpan.spanContext() };
  }

  generation(record: GenerationRecord): void {
    recordGeneration(record, this.parent);
  }

  toolCall(record: ToolCallRecord): void {
    recordToolCall(record, this.parent);
  }

  agent(info: AgentInfo): AgentObserver {
    return new LangfuseAgentRun(info, this.parent);
  }

  approvalRequested(approval: ApprovalRecordInfo): void {
    startObservation(
      'approval.requested',
      { metadata: { ...approval } },
      { asType: 'event', ...this.parent },
    );
  }

  inputAsked(question: InputQuestionInfo): void {
    startObservation('input.requested', { metadata: { ...question } }, { asType: 'event', ...this.parent });
  }

  compaction(record: CompactionRecord): void {
    const span = startObservation(
      'compaction',
      {
        metadata: {
          model: record.model,
          tokensBefore: record.tokensBefore,
          tokensAfter: record.tokensAfter,
          messagesFolded: record.messagesFolded,
        },
        ...(record.error ? { level: 'WARNING' as const, statusMessage: record.error } : {}),
      },
      { startTime: record.startTime, ...this.parent },
    );
    span.end(record.endTime);
  }

  end(outcome: { status: 'replied' | 'parked' | 'failed' | 'stopped'; error?: string }): void {
    this.root.update({
      output: { status: outcome.status },
      ...(outcome.error ? { level: 'ERROR' as const, statusMessage: outcome.error } : {}),
    });
    this.root.end();
  }
}

export function createLangfuseObserver(options: LangfuseObserverOptions): Observer {
  const processor = new LangfuseSpanProcessor({
    publicKey: options.publicKey,
    secretKey: options.secretKey,
    baseUrl: options.baseUrl,
    environment: 'production',
    ...(options.exportMode ? { exportMode: options.exportMode } : {}),
  });
  const provider = new NodeTracerProvider({ spanProcessors: [processor] });
  setLangfuseTracerProvider(provider);
  options.logger.info({ baseUrl: options.baseUrl }, 'Langfuse tracing on');
  const scores = createScoreSender(options);

  const approvalEvent = (name: string, approval: ApprovalRecordInfo, extra: Record<string, string> = {}) => {
    const event = startObservation(name, { metadata: { ...approval, ...extra } }, { asType: 'event' });
    event.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_SESSION_ID, approval.conversationKey);
  };

  return {
    startTurn: (turn) => new LangfuseTurn(turn, options.serviceName),
    approvalDecided: (approval) =>
      approvalEvent('approval.decided', approval, {
        decision: approval.decision,
        decidedBy: approval.decidedBy,
      }),
    approvalExpired: (approval) => approvalEvent('approval.expired', approval),
    feedbackGiven: (feedback) => scores.send(feedback),
    inputAnswered: (answer) => {
      // A span, not an event: an event ends as it starts, before the session could be set on it.
      const span = startObservation('input.answered', { metadata: { ...answer } });
      span.otelSpan.setAttribute(LangfuseOtelSpanAttributes.TRACE_SESSION_ID, answer.conversationKey);
      span.end();
    },
    flush: async () => {
      await Promise.all([processor.forceFlush(), scores.flush()]);
    },
    shutdown: async () => {
      await scores.flush();
      await provider.shutdown();
      setLangfuseTracerProvider(null);
    },
  };
}
