import type { ConversationMessage, ToolCall } from '../contracts/messages.js';
import type { TokenUsage } from '../contracts/observer.js';
import type { JsonSchema } from '../contracts/tool-facts.js';

/** The model as the core sees it: one streamed chat completion per call. */

/** What the model reads of a shared file, on the user message that shared it (never stored with it). */
export type FileContent =
  | { type: 'text'; name: string; text: string }
  | { type: 'image'; name: string; mimeType: string; base64: string };

export type PromptMessage =
  | Exclude<ConversationMessage, { role: 'user' }>
  | (Extract<ConversationMessage, { role: 'user' }> & { fileContents?: FileContent[] })
  | { role: 'system'; content: string };

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ModelRequest {
  messages: PromptMessage[];
  tools?: ToolDefinition[];
  signal?: AbortSignal;
  /** Streamed text as it arrives. */
  onText?: (delta: string) => void | Promise<void>;
  maxOutputTokens?: number;
  /** Ask for structured output: a JSON object matching `schema` (OpenAI `response_format: json_schema`). */
  responseSchema?: { name: string; schema: JsonSchema };
}

export interface ModelResult {
  content: string;
  toolCalls: ToolCall[];
  /** As reported by the model (usage chunk); absent if the endpoint does not report it. */
  usage?: TokenUsage;
  finishReason: string;
  model: string;
  startTime: Date;
  firstTokenTime?: Date;
  endTime: Date;
}

export interface ModelClient {
  readonly model: string;
  /** Throws ModelError (with a message fit for the user) when the call fails after retries. */
  complete(request: ModelRequest): Promise<ModelResult>;
}
