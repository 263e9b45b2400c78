import type { ModelClient } from '../model/model-client.js';

/** A specialist Butler can delegate to: its own instructions, its own subset of tools, maybe its own model. */
export interface AgentSpec {
  name: string;
  /** What Butler's model reads when choosing whom to ask. */
  description: string;
  /** The agent's system prompt. */
  instructions: string;
  /** Tool names or `*` globs over every tool Butler has; empty = none. */
  tools: readonly string[];
  model: ModelClient;
  /** Model calls per run, across approval waits. */
  maxSteps: number;
  /** How long one run may take (from its start, or from its continuation after a decision). */
  timeoutMs: number;
}

/** The name of the tool Butler's model delegates with. */
export const delegateToolName = 'delegate';
