import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError } from '../errors.js';
import type { ToolCall } from '../messages.js';
import type { ModelClient, ModelRequest, ModelResult, PromptMessage } from './model-client.js';

export interface OpenAIModelOptions {
  baseUrl: string | undefined;
  apiKey: string;
  model: string;
  /** Per attempt until the response starts, and the longest silence allowed while it streams. */
  timeoutMs: number;
  /** The SDK's retries (connection errors, 408/409/429/5xx, honouring Retry-After) before the stream starts. */
  maxRetries: number;
  temperature?: number | undefined;
}

function toOpenAIMessage(message: PromptMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: message.author ? `${message.author}: ${message.content}` : message.content,
      };
    case 'assistant':
      if (message.toolCalls && message.toolCalls.length > 0) {
        return {
          role: 'assistant',
          content: message.content || null,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        };
      }
      return { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId };
  }
}

/** Maps SDK failures to a ModelError whose `userMessage` says, in chat, what went wrong. */
export function toModelError(error: unknown, timedOut: boolean): ModelError {
  if (error instanceof ModelError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  if (timedOut || error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError('model_timeout', detail, 'The model took too long to answer. Please try again.', {
      cause: error,
    });
  }
  if (error instanceof OpenAI.RateLimitError) {
    return new ModelError(
      'model_rate_limited',
      detail,
      'The model is rate-limited right now. Please try again in a minute.',
      {
        cause: error,
      },
    );
  }
  if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
    return new ModelError(
      'model_auth',
      detail,
      'Butler cannot authenticate with its model service; an admin needs to check BUTLER_API_TOKEN.',
      {
        cause: error,
      },
    );
  }
  if (error instanceof OpenAI.InternalServerError) {
    return new ModelError(
      'model_unavailable',
      detail,
      'The model service had an error. Please try again shortly.',
      {
        cause: error,
      },
    );
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ModelError(
      'model_unreachable',
      detail,
      'Butler could not reach its model service. Please try again shortly.',
      {
        cause: error,
      },
    );
  }
  if (error instanceof OpenAI.BadRequestError) {
    return new ModelError(
      'model_rejected',
      detail,
      'The model rejected the request. Try rephrasing, or start a new thread.',
      {
        cause: error,
      },
    );
  }
  return new ModelError(
    'model_failed',
    detail,
    'Something went wrong while the model was answering. Please try again.',
    {
      cause: error,
    },
  );
}

/** An OpenAI-compatible chat model, streamed, with usage, an idle timeout and bounded retries. */
export class OpenAIModel implements ModelClient {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIModelOptions) {
    this.model = options.model;
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl ?? null,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  async complete(request: ModelRequest): Promise<ModelResult> {
    const startTime = new Date();
    const controller = new AbortController();
    let timedOut = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.options.timeoutMs);
    };
    const abortFromCaller = () => controller.abort();
    request.signal?.addEventListener('abort', abortFromCaller, { once: true });

    const tools: ChatCompletionTool[] | undefined = request.tools?.length
      ? request.tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }))
      : undefined;

    let content = '';
    let finishReason = 'stop';
    let firstTokenTime: Date | undefined;
    let usage: ModelResult['usage'];
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.model,
          messages: request.messages.map(toOpenAIMessage),
          stream: true,
          stream_options: { include_usage: true },
          ...(tools ? { tools } : {}),
          ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
          ...(request.maxOutputTokens ? { max_tokens: request.maxOutputTokens } : {}),
        },
        { signal: controller.signal },
      );
      armIdleTimer();
      for await (const chunk of stream) {
        armIdleTimer();
        if (chunk.usage) {
          usage = {
            promptTokens: chunk.usage.prompt_tokens,
            completionTokens: chunk.usage.completion_tokens,
          };
        }
        const choice = chunk.choices[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta.content) {
          firstTokenTime ??= new Date();
          content += delta.content;
          await request.onText?.(delta.content);
        }
        for (const fragment of delta.tool_calls ?? []) {
          firstTokenTime ??= new Date();
          const call = calls[fragment.index] ?? { id: '', name: '', arguments: '' };
          calls[fragment.index] = call;
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.name += fragment.function.name;
          if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
      // An aborted stream ends the loop quietly instead of throwing: never pass a cut-off answer on as whole.
      if (controller.signal.aborted) throw new Error('model stream aborted');
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw toModelError(error, timedOut);
    } finally {
      clearTimeout(idleTimer);
      request.signal?.removeEventListener('abort', abortFromCaller);
    }

    const toolCalls: ToolCall[] = calls
      .filter((call) => call !== undefined)
      .map((call, index) => ({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments }));
    return {
      content,
      toolCalls,
      ...(usage ? { usage } : {}),
      finishReason,
      model: this.model,
      startTime,
      ...(firstTokenTime ? { firstTokenTime } : {}),
      endTime: new Date(),
    };
  }
}
