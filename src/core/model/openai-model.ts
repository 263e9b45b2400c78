import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError, networkReason } from '../contracts/errors.js';
import type { ToolCall } from '../contracts/messages.js';
import { cleanText, StreamingTextCleaner } from '../text/index.js';
import type { ModelClient, ModelRequest, ModelResult, PromptMessage } from './model-client.js';
import { ModelGate, retryAfterMs } from './model-gate.js';

export interface OpenAIModelOptions {
  baseUrl: string | undefined;
  apiKey: string;
  model: string;
  /**
   * One deadline for the answer to start, over every attempt and the waits between them; once it
   * streams, the longest silence allowed between two chunks.
   */
  timeoutMs: number;
  /** Retries of connection errors, 408/409 and 5xx (honouring Retry-After) within that deadline; 429s wait it out. */
  maxRetries: number;
  /** The model's limits, shared by every client of the same model in this process. */
  gate?: ModelGate | undefined;
  temperature?: number | undefined;
  /** The HTTP client's fetch; the global one when absent. */
  fetch?: typeof fetch | undefined;
}

function toOpenAIMessage(message: PromptMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user': {
      const text = message.author ? `${message.author}: ${message.content}` : message.content;
      if (!message.fileContents?.length) return { role: 'user', content: text };
      // Files as parts after the words: text in a quoted block the model reads as data, images as data URLs.
      return {
        role: 'user',
        content: [
          { type: 'text', text },
          ...message.fileContents.map((file) =>
            file.type === 'text'
              ? {
                  type: 'text' as const,
                  text: `<file name=${JSON.stringify(file.name)}>\n${file.text}\n</file>`,
                }
              : {
                  type: 'image_url' as const,
                  image_url: { url: `data:${file.mimeType};base64,${file.base64}`, detail: 'auto' as const },
                },
          ),
        ],
      };
    }
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

/**
 * Maps SDK failures to a ModelError whose `userMessage` says, in chat, what went wrong; its message says which
 * endpoint failed and how (for the log, and the terminal chat, where the one person reading is the operator).
 */
export function toModelError(error: unknown, timedOut: boolean, endpoint = 'the model endpoint'): ModelError {
  if (error instanceof ModelError) return error;
  const detail =
    error instanceof OpenAI.APIConnectionError && !(error instanceof OpenAI.APIConnectionTimeoutError)
      ? `${endpoint} could not be reached (${networkReason(error)})`
      : `${endpoint}: ${error instanceof Error ? error.message : String(error)}`;
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

/** Failures worth another attempt: the connection, timeouts of one attempt, 408, 409 and 5xx (429 waits apart). */
function isRetryable(error: unknown): boolean {
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (!(error instanceof OpenAI.APIError) || error.status === undefined) return false;
  return error.status === 408 || error.status === 409 || error.status >= 500;
}

const isRateLimited = (error: unknown) => error instanceof OpenAI.RateLimitError;

/** The server's Retry-After, else exponential backoff from half a second. */
function retryDelayMs(error: unknown, attempt: number): number {
  return (
    retryAfterMs(error instanceof OpenAI.APIError ? error.headers : undefined) ??
    Math.min(500 * 2 ** attempt, 8000)
  );
}

/** One streamed completion as it arrives, before cleaning. */
interface RawCompletion {
  content: string;
  finishReason: string;
  firstTokenTime: Date | undefined;
  usage: ModelResult['usage'];
  calls: Array<{ id: string; name: string; arguments: string }>;
}

/**
 * An OpenAI-compatible chat model, streamed, with usage. One deadline (`timeoutMs`) covers everything
 * until the answer starts: every attempt and every wait between them, so a hung endpoint costs the person
 * `timeoutMs`, not (1 + maxRetries) times it. A 429 is waited out, by every call to the model at once
 * (ModelGate), for as long as the deadline allows; other failures are retried `maxRetries` times. Once the
 * answer streams, the same span of silence ends it; a stream that broke off is never retried (its text was
 * already shown).
 */
export class OpenAIModel implements ModelClient {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly gate: ModelGate;

  constructor(private readonly options: OpenAIModelOptions) {
    this.model = options.model;
    this.gate = options.gate ?? new ModelGate(options.model);
    // Retries are ours (below), inside the deadline; the SDK's would wait outside it.
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl ?? null,
      timeout: options.timeoutMs,
      maxRetries: 0,
      fetch: options.fetch,
    });
  }

  /** Where the model is, for error messages: the endpoint's URL, never its key. */
  private get endpoint(): string {
    return this.options.baseUrl ?? 'https://api.openai.com/v1';
  }

  async complete(request: ModelRequest): Promise<ModelResult> {
    const startTime = new Date();
    const controller = new AbortController();
    let timedOut = false;
    const timeOut = () => {
      timedOut = true;
      controller.abort();
    };
    let timer = setTimeout(timeOut, this.options.timeoutMs);
    const deadline = Date.now() + this.options.timeoutMs;
    let streaming = false;
    const onChunk = () => {
      streaming = true;
      clearTimeout(timer);
      timer = setTimeout(timeOut, this.options.timeoutMs);
    };
    const abortFromCaller = () => controller.abort();
    request.signal?.addEventListener('abort', abortFromCaller, { once: true });
    // A signal aborted before the call (a turn stopped while a tool ran) fires no event: no request at all.
    if (request.signal?.aborted) controller.abort();

    let lastFailure: unknown;
    let failures = 0;
    let refusals = 0;
    try {
      for (;;) {
        // Closed past the deadline (a Retry-After, a spent budget): say so now instead of waiting to fail.
        if (Date.now() + this.gate.waitMs >= deadline) throw this.rateLimited(lastFailure);
        try {
          const release = await this.gate.enter(controller.signal);
          try {
            const raw = await this.attempt(request, controller.signal, deadline, onChunk);
            return this.result(raw, startTime);
          } finally {
            release();
          }
        } catch (error) {
          if (request.signal?.aborted) throw error;
          // The deadline cut a wait or an attempt short: say what kept failing, if anything did.
          if (timedOut) throw toModelError(lastFailure ?? error, lastFailure === undefined, this.endpoint);
          if (!streaming && isRateLimited(error)) {
            // At least a quarter second: a `retry-after: 0` answered at once would spin until the deadline.
            this.gate.hold(Math.max(250, retryDelayMs(error, refusals++)));
            lastFailure = error;
            continue;
          }
          const wait = retryDelayMs(error, failures);
          if (
            streaming ||
            !isRetryable(error) ||
            failures >= this.options.maxRetries ||
            Date.now() + wait >= deadline
          )
            throw toModelError(error, false, this.endpoint);
          failures += 1;
          lastFailure = error;
          await sleep(wait, undefined, { signal: controller.signal }).catch(() => {});
          if (timedOut) throw toModelError(lastFailure, false, this.endpoint);
          if (request.signal?.aborted) throw new Error('model call aborted');
        }
      }
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', abortFromCaller);
    }
  }

  /** The model asked for a wait longer than the deadline left: the 429 that said so, or the spent budget. */
  private rateLimited(lastFailure: unknown): ModelError {
    if (isRateLimited(lastFailure)) return toModelError(lastFailure, false, this.endpoint);
    return new ModelError(
      'model_rate_limited',
      `${this.endpoint}: the rate limit resets in ${Math.ceil(this.gate.waitMs / 1000)} s, after this call's deadline`,
      'The model is rate-limited right now. Please try again in a minute.',
    );
  }

  private async attempt(
    request: ModelRequest,
    signal: AbortSignal,
    deadline: number,
    onChunk: () => void,
  ): Promise<RawCompletion> {
    const tools: ChatCompletionTool[] | undefined = request.tools?.length
      ? request.tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }))
      : undefined;
    const raw: RawCompletion = {
      content: '',
      finishReason: 'stop',
      firstTokenTime: undefined,
      usage: undefined,
      calls: [],
    };
    const cleaner = new StreamingTextCleaner();
    const { data: stream, response } = await this.client.chat.completions
      .create(
        {
          model: this.model,
          messages: request.messages.map(toOpenAIMessage),
          stream: true,
          stream_options: { include_usage: true },
          ...(tools ? { tools } : {}),
          ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
          ...(request.maxOutputTokens ? { max_tokens: request.maxOutputTokens } : {}),
          ...(request.responseSchema
            ? {
                response_format: {
                  type: 'json_schema' as const,
                  json_schema: {
                    name: request.responseSchema.name,
                    schema: request.responseSchema.schema,
                    strict: true,
                  },
                },
              }
            : {}),
        },
        { signal, timeout: Math.max(1, deadline - Date.now()) },
      )
      .withResponse();
    this.gate.observe(response.headers);
    for await (const chunk of stream) {
      onChunk();
      if (chunk.usage) {
        raw.usage = {
          promptTokens: chunk.usage.prompt_tokens,
          completionTokens: chunk.usage.completion_tokens,
        };
      }
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta.content) {
        raw.firstTokenTime ??= new Date();
        raw.content += delta.content;
        const text = cleaner.push(delta.content);
        if (text) await request.onText?.(text);
      }
      for (const fragment of delta.tool_calls ?? []) {
        raw.firstTokenTime ??= new Date();
        const call = raw.calls[fragment.index] ?? { id: '', name: '', arguments: '' };
        raw.calls[fragment.index] = call;
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
      }
      if (choice.finish_reason) raw.finishReason = choice.finish_reason;
    }
    // An aborted stream ends the loop quietly instead of throwing: never pass a cut-off answer on as whole.
    if (signal.aborted) throw new Error('model stream aborted');
    const rest = cleaner.flush();
    if (rest) await request.onText?.(rest);
    return raw;
  }

  private result(raw: RawCompletion, startTime: Date): ModelResult {
    const toolCalls: ToolCall[] = raw.calls
      .filter((call) => call !== undefined)
      .map((call, index) => ({
        id: cleanText(call.id) || `call_${index}`,
        name: cleanText(call.name),
        arguments: cleanText(call.arguments),
      }));
    return {
      content: cleanText(raw.content),
      toolCalls,
      ...(raw.usage ? { usage: raw.usage } : {}),
      finishReason: raw.finishReason,
      model: this.model,
      startTime,
      ...(raw.firstTokenTime ? { firstTokenTime: raw.firstTokenTime } : {}),
      endTime: new Date(),
    };
  }
}
