import { z } from 'zod';
import { risks } from '../core/tools/tool.js';
import { agentsSchema, delegationSchema, routingSchema } from './agents-schema.js';
import { apiSchema } from './api-keys.js';
import { approvalPolicySchema } from './approval-policy.js';
import { budgetsSchema } from './budgets.js';
import { channelsSchema } from './channels.js';
import { feishuAppsSchema } from './feishu-apps.js';
import { filesSchema } from './files.js';
import { httpSchema } from './http.js';
import { mcpServersSchema } from './mcp-servers.js';
import { peopleSchema } from './people.js';
import { schedulesSchema } from './schedules.js';
import { slackSchema } from './slack.js';

/** The config file (`butler.config.yaml` or JSON). Unknown keys are errors, so typos surface at start-up. */

const userIds = z.array(z.string().min(1)).default([]);

const httpTool = z
  .object({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).default({}),
    timeoutMs: z.number().int().positive().max(120_000).default(10_000),
    /** Longest response body handed back to the model, in characters. */
    maxResponseChars: z.number().int().positive().default(4000),
    /** Past this many bytes the response is no longer read (the model is told it was cut). */
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .max(64 * 1_048_576)
      .default(1_048_576),
    /** A response that is a file (an image, a PDF, an attachment) is sent into the conversation up to this size. */
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .max(1024 * 1_048_576)
      .default(20 * 1_048_576),
    /** `refuse`: a redirect is an error; `same-origin`: followed within the URL's origin, request unchanged. */
    redirects: z.enum(['refuse', 'same-origin']).default('refuse'),
    /** Calls carry the bearer token of the asker's (or the shared) connection to this OAuth MCP server. */
    auth: z
      .object({ connection: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();

const tool = z
  .object({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, _ and - only, at most 64'),
    description: z.string().min(1),
    risk: z.enum(risks),
    input: z
      .record(z.string(), z.unknown())
      .refine((schema) => schema.type === 'object', 'must be a JSON Schema with type: object')
      // Only declared properties are ever sent, so a schema that admits others would promise what is refused.
      .refine(
        (schema) =>
          (schema.additionalProperties === undefined || schema.additionalProperties === false) &&
          schema.patternProperties === undefined,
        'declares its arguments in `properties` only: an HTTP tool sends no other property',
      )
      .default({ type: 'object', properties: {} }),
    http: httpTool,
  })
  .strict();

const allowlist = z
  .object({
    workspaces: z.array(z.string()).optional(),
    channels: z.array(z.string()).optional(),
    users: z.array(z.string()).optional(),
  })
  .strict();

export const fileConfigSchema = z
  .object({
    systemPrompt: z.string().default(''),
    approvers: z
      .object({ slack: userIds, feishu: userIds, console: userIds, api: userIds })
      .strict()
      .default({ slack: [], feishu: [], console: [], api: [] }),
    /** One person across platforms: their Slack, Feishu, API key and terminal identities. */
    people: peopleSchema,
    approvalTtlMinutes: z.number().positive().default(60),
    tools: z.array(tool).default([]),
    /** The HTTP API's keys: who may talk to Butler over HTTP, and with which scopes; limits on its streams. */
    api: apiSchema,
    /** Request deadlines and connection caps of the HTTP server. */
    http: httpSchema,
    /** `GET /metrics` in Prometheus text format: counts only (no text, ids or secrets), unauthenticated. */
    metrics: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .default({ enabled: true }),
    /** MCP servers whose tools Butler offers (`{name}__{tool}`), gated like HTTP tools. */
    mcpServers: mcpServersSchema,
    /** Specialist agents Butler may delegate to, each with its own prompt, tools and possibly model. */
    agents: agentsSchema,
    delegation: delegationSchema,
    /** An optional classification before each turn that may hand the message straight to an agent. */
    routing: routingSchema,
    /** Per-channel profiles: instructions, model, tools, agents and approvers where they match. */
    channels: channelsSchema,
    /** USD per million tokens by model name, to put a cost on usage; an unlisted model's cost is unknown. */
    pricing: z
      .record(z.string().min(1), z.object({ input: z.number().min(0), output: z.number().min(0) }).strict())
      .default({}),
    /** Spending caps per workspace, channel or person, checked before each turn calls the model. */
    budgets: budgetsSchema,
    /** How long "Approve for this conversation" lets later calls of that tool run there; 0 hides the button. */
    standingApprovalHours: z.number().min(0).max(720).default(8),
    /** Messages a user may send per minute before Butler answers politely instead of with the model. */
    rateLimit: z
      .object({
        messagesPerMinute: z.number().int().positive().default(20),
        /** Message searches one person may make a minute (`search_messages`). */
        searchesPerMinute: z.number().int().positive().default(10),
      })
      .strict()
      .default({ messagesPerMinute: 20, searchesPerMinute: 10 }),
    /** Per-platform allowlists; an omitted list allows everyone. */
    access: z
      .object({ slack: allowlist.optional(), feishu: allowlist.optional(), console: allowlist.optional() })
      .strict()
      .default({}),
    /** Longest message text Butler reads, on every platform; a longer one is cut and the reply says so. */
    maxMessageChars: z.number().int().min(1000).max(200_000).default(40_000),
    /** Messages older than this when they arrive (after an outage) are skipped, not answered. */
    maxMessageAgeMinutes: z.number().positive().default(30),
    /** Answer messages from other bots (Slack). Off by default to avoid bot loops. */
    answerBots: z.boolean().default(false),
    /** Slack's agent container: the suggested prompts it offers. */
    slack: slackSchema,
    /** Feishu: the welcome card a direct chat's first message gets, with prompts a click sends; none: no card. */
    feishu: z
      .object({
        suggestedPrompts: z.array(z.string().trim().min(1).max(100)).max(4).default([]),
        /** More apps, beside the one `FEISHU_APP_ID` names: several self-built apps, or a store app. */
        apps: feishuAppsSchema,
      })
      .strict()
      .default({ suggestedPrompts: [], apps: [] }),
    worker: z
      .object({
        /** How long a worker's hold on a conversation lasts without renewal (crash recovery waits this long). */
        leaseSeconds: z.number().positive().default(30),
        pollMilliseconds: z.number().int().positive().default(500),
        /**
         * Turns in flight in this process: each waits on its model, tools and platforms as a promise, holding no
         * database connection, so hundreds cost little (docs/performance.md); a model's own limit is
         * `model.maxConcurrent`.
         */
        concurrency: z.number().int().positive().max(4096).default(256),
        /** How often expired approvals are closed; a card that failed to post is retried after six sweeps. */
        sweepMilliseconds: z.number().int().positive().default(5000),
        /**
         * Finished inbox events (each delivery's dedup record and payload) are deleted this long after
         * they finished; platforms stop redelivering within hours. Conversation messages are kept.
         */
        inboxRetentionHours: z.number().positive().default(168),
        /** A finished reply the platform cannot take (an outage) is retried with backoff for this long. */
        deliveryRetrySeconds: z.number().min(0).default(120),
        /**
         * The working indicator (status line or reaction) shows when the reply has not started this long
         * after the turn began; 0 shows it at once. A reply that starts sooner is its own sign of life.
         */
        workingIndicatorMilliseconds: z.number().int().min(0).default(500),
      })
      .strict()
      .default({
        leaseSeconds: 30,
        pollMilliseconds: 500,
        concurrency: 256,
        sweepMilliseconds: 5000,
        inboxRetentionHours: 168,
        deliveryRetrySeconds: 120,
        workingIndicatorMilliseconds: 500,
      }),
    model: z
      .object({
        /**
         * Per model call: the answer must start within it, retries and their waiting included; once it
         * streams, no silence may last longer.
         */
        timeoutMs: z.number().int().positive().default(60_000),
        maxRetries: z.number().int().min(0).max(5).default(2),
        /** Model calls per turn (tool round-trips) before Butler stops and says so. */
        maxSteps: z.number().int().positive().max(32).default(8),
        temperature: z.number().min(0).max(2).optional(),
        /** Whether the model can see images: shared images reach it as pictures, else only by name. */
        vision: z.boolean().default(true),
        /**
         * Calls in flight to each model (Butler's, the compaction model, every agent's) across every process
         * sharing the database; unset, only the model's own 429s and rate-limit headers hold calls back.
         */
        maxConcurrent: z.number().int().positive().max(10_000).optional(),
      })
      .strict()
      .default({ timeoutMs: 60_000, maxRetries: 2, maxSteps: 8, vision: true }),
    /** Files and images people share, and what the model is shown of them. */
    files: filesSchema,
    /** Scheduled tasks: their limits, and the team's own tasks. */
    schedules: schedulesSchema,
    /** Two-person approvals, reminders and escalation. */
    approvalPolicy: approvalPolicySchema,
    compaction: z
      .object({
        /** Share of the threshold kept verbatim as the recent window after compacting. */
        keepRecentRatio: z.number().gt(0).lt(1).default(0.35),
        timeoutMs: z.number().int().positive().default(30_000),
        /** After a failed compaction, wait this long before trying again. */
        retryAfterSeconds: z.number().min(0).default(60),
      })
      .strict()
      .default({ keepRecentRatio: 0.35, timeoutMs: 30_000, retryAfterSeconds: 60 }),
  })
  .strict();

export type FileConfig = z.infer<typeof fileConfigSchema>;
export type HttpToolConfig = FileConfig['tools'][number];
export type Allowlist = z.infer<typeof allowlist>;
