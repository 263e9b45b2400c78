import { z } from 'zod';
import type { ToolCall } from '../contracts/messages.js';
import type { ToolDefinition } from '../model/model-client.js';
import type { AgentSpec } from './agent-spec.js';
import { delegateToolName } from './agent-spec.js';

/** The `delegate` tool Butler's model sees: which agent, what to do, and what it needs to know. */

export interface DelegationRequest {
  agent: string;
  task: string;
  context?: string;
}

export function delegateDefinition(agents: readonly AgentSpec[]): ToolDefinition {
  const roster = agents.map((agent) => `- ${agent.name}: ${agent.description}`).join('\n');
  return {
    name: delegateToolName,
    description: `Hand a task to a specialist agent and get its result back; you then answer the person yourself. The agent sees only the task and the context you pass, not this conversation, so include every fact it needs. Ask several agents at once by calling this tool several times in one step.\n\nAgents:\n${roster}`,
    parameters: {
      type: 'object',
      properties: {
        agent: { type: 'string', enum: agents.map((agent) => agent.name), description: 'Which agent.' },
        task: { type: 'string', description: 'What the agent should do, in full sentences.' },
        context: {
          type: 'string',
          description: 'Facts from the conversation the agent needs (names, ids, what was said).',
        },
      },
      required: ['agent', 'task'],
      additionalProperties: false,
    },
  };
}

/** The request in a `delegate` call, or why it cannot be run (told to the model, which may try again). */
export function parseDelegation(
  call: ToolCall,
  agents: readonly AgentSpec[],
): { ok: true; request: DelegationRequest; agent: AgentSpec } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(call.arguments.trim() === '' ? '{}' : call.arguments);
  } catch {
    return { ok: false, error: 'the arguments are not valid JSON; send a JSON object.' };
  }
  const names = agents.map((agent) => agent.name);
  const parsed = z
    .object({
      agent: z.string(),
      task: z.string().trim().min(1, 'task must not be empty'),
      context: z.string().optional(),
    })
    .safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      error: `invalid arguments: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
    };
  const agent = agents.find((candidate) => candidate.name === parsed.data.agent);
  if (!agent)
    return { ok: false, error: `unknown agent "${parsed.data.agent}". Agents: ${names.join(', ')}.` };
  const { context, ...rest } = parsed.data;
  return { ok: true, agent, request: context?.trim() ? { ...rest, context } : rest };
}
