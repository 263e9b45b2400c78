import { z } from 'zod';
import type { ConfigIssue } from '../core/errors.js';
import type { AgentConfig, ModelEndpoint, RoutingConfig } from './index.js';
import type { Interpolate } from './mcp-servers.js';

/**
 * `agents`, `delegation` and `routing` in the config file: specialist agents Butler may delegate to, and
 * an optional classification before each turn that may hand the message straight to one. Agents and the
 * router may name their own model; `${VAR}` in `baseUrl` and `apiKey` is read from the environment.
 */

/** Local endpoints (Ollama, vLLM) need no key, but the openai SDK insists on one. */
const placeholderApiKey = 'not-needed';

export function modelEndpoint(
  baseUrl: string | undefined,
  apiKey: string | undefined,
  model: string,
): ModelEndpoint {
  return { baseUrl, apiKey: apiKey ?? placeholderApiKey, model };
}

/** A model setting that may replace Butler's: the model's name, and optionally an endpoint of its own. */
export interface EndpointOverride {
  model?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
}

/**
 * A model name alone means "same endpoint, cheaper model": Butler's base URL and key. A base URL comes
 * with its own key or none. No model name means Butler's own model client (undefined).
 */
export function overrideEndpoint(
  override: EndpointOverride,
  butler: ModelEndpoint | undefined,
): ModelEndpoint | undefined {
  if (!override.model) return undefined;
  return override.baseUrl
    ? modelEndpoint(override.baseUrl, override.apiKey, override.model)
    : modelEndpoint(butler?.baseUrl, override.apiKey ?? butler?.apiKey, override.model);
}

const endpointFields = {
  model: z.string().min(1).optional(),
  baseUrl: z.string().min(1).optional(),
  apiKey: z.string().min(1).optional(),
};

/** `baseUrl` and `apiKey` only say where the named model lives, and a key belongs to a URL of its own. */
function endpointProblems(settings: EndpointOverride): { key: keyof EndpointOverride; message: string }[] {
  return [
    ...(settings.baseUrl !== undefined && settings.model === undefined
      ? [{ key: 'baseUrl' as const, message: 'needs `model`, the model to call at this endpoint' }]
      : []),
    ...(settings.apiKey !== undefined && (settings.model === undefined || settings.baseUrl === undefined)
      ? [
          {
            key: 'apiKey' as const,
            message: "needs `model` and `baseUrl` (a `model` alone uses Butler's endpoint and key)",
          },
        ]
      : []),
  ];
}

// One strict object with a check, as for MCP servers, so that each problem is reported at its key.
const agentSchema = z
  .object({
    // Butler names the agent in a tool call, so names stay plain identifiers.
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_]+$/, 'letters, digits and _ only')
      .max(32),
    /** What Butler reads when choosing an agent. */
    description: z.string().min(1),
    /** The agent's own system prompt. */
    instructions: z.string().min(1),
    /** Tool names or `*` globs over every tool Butler has; none by default. */
    tools: z.array(z.string().min(1)).default([]),
    ...endpointFields,
    maxSteps: z.number().int().min(1).max(32).default(6),
    /** The agent's whole run, or one segment of it between approvals. */
    timeoutMs: z.number().int().positive().max(600_000).default(120_000),
  })
  .strict()
  .check((context) => {
    for (const { key, message } of endpointProblems(context.value))
      context.issues.push({ code: 'custom', message, input: context.value, path: [key] });
  });

export const agentsSchema = z
  .array(agentSchema)
  .default([])
  .check((context) => {
    const firstIndex = new Map<string, number>();
    context.value.forEach((agent, index) => {
      const earlier = firstIndex.get(agent.name);
      if (earlier === undefined) firstIndex.set(agent.name, index);
      else
        context.issues.push({
          code: 'custom',
          message: `agents ${earlier} and ${index} are both named ${agent.name}`,
          input: agent.name,
          path: [index, 'name'],
        });
    });
  });

export const delegationSchema = z
  .object({
    /** Delegations asked for in one model step run at most this many at once. */
    maxParallel: z.number().int().min(1).max(8).default(3),
  })
  .strict()
  .default({ maxParallel: 3 });

export const routingSchema = z
  .object({
    enabled: z.boolean().default(false),
    ...endpointFields,
    timeoutMs: z.number().int().positive().max(60_000).default(5000),
    /** A `delegate` decision less sure than this falls back to a normal turn. */
    minConfidence: z.number().min(0).max(1).default(0.7),
  })
  .strict()
  .check((context) => {
    for (const { key, message } of endpointProblems(context.value))
      context.issues.push({ code: 'custom', message, input: context.value, path: [key] });
  })
  .default({ enabled: false, timeoutMs: 5000, minConfidence: 0.7 });

export type AgentFileConfig = z.infer<typeof agentSchema>;
export type RoutingFileConfig = z.infer<typeof routingSchema>;

export interface ResolveContext {
  /** Butler's own model, whose endpoint a model name alone reuses. */
  butlerModel: ModelEndpoint | undefined;
  interpolate: Interpolate;
  issues: ConfigIssue[];
}

/** `${VAR}` resolved in `baseUrl` and `apiKey`; unset variables and a bad URL become issues. */
function resolveEndpoint(
  settings: EndpointOverride,
  owner: { label: string; path: string },
  context: ResolveContext,
): ModelEndpoint | undefined {
  // The values reach only the model client, which keeps them out of logs: no list of secrets is needed.
  const secrets: string[] = [];
  const value = (key: 'baseUrl' | 'apiKey') => {
    const text = settings[key];
    if (text === undefined) return undefined;
    const missing: string[] = [];
    const resolved = context.interpolate(text, missing, secrets);
    for (const name of new Set(missing)) {
      context.issues.push({
        variable: name,
        message: `used by ${owner.label} (config file: ${owner.path}.${key}) but not set`,
      });
    }
    return resolved;
  };
  const baseUrl = value('baseUrl');
  const apiKey = value('apiKey');
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) {
    context.issues.push({ variable: `config file: ${owner.path}.baseUrl`, message: 'not a valid URL' });
  }
  return overrideEndpoint({ model: settings.model, baseUrl, apiKey }, context.butlerModel);
}

export function resolveAgents(agents: readonly AgentFileConfig[], context: ResolveContext): AgentConfig[] {
  return agents.map((agent, index) => ({
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    tools: agent.tools,
    endpoint: resolveEndpoint(agent, { label: `agent ${agent.name}`, path: `agents.${index}` }, context),
    maxSteps: agent.maxSteps,
    timeoutMs: agent.timeoutMs,
  }));
}

export function resolveRouting(
  routing: RoutingFileConfig,
  agents: readonly AgentConfig[],
  context: ResolveContext,
): RoutingConfig {
  if (!routing.enabled) return { enabled: false };
  if (agents.length === 0) {
    context.issues.push({
      variable: 'config file: routing.enabled',
      message: 'routing needs at least one agent (config file: agents)',
    });
  }
  return {
    enabled: true,
    endpoint: resolveEndpoint(routing, { label: 'routing', path: 'routing' }, context),
    timeoutMs: routing.timeoutMs,
    minConfidence: routing.minConfidence,
  };
}
