import { z } from 'zod';

/**
 * The zod schemas of `agents`, `delegation` and `routing` in the config file (what `file.ts` parses);
 * `agents.ts` resolves them into endpoints and agent settings.
 */

/** A model setting that may replace Butler's: the model's name, and optionally an endpoint of its own. */
export interface EndpointOverride {
  model?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
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
