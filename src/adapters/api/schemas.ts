import { z } from 'zod';
import { isTimeZone } from '../../core/schedules/index.js';

/** Request and response shapes of the API: validated here, and the source of `openapi.json`. */

export const conversationId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, . _ and - only, at most 128');

export const messageText = z.string().trim().max(20_000);

/** A message needs words or files: the problem named when it has neither. */
export const noContent = 'required unless files are sent';

export const sharedFileBody = z.strictObject({
  name: z.string().trim().min(1).max(200).describe('File name with its extension, e.g. "errors.csv"'),
  mimeType: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type, e.g. image/png')
    .optional()
    .describe('Butler also looks at the bytes'),
  data: z.base64().describe('The file content, base64-encoded (standard alphabet, padded)'),
});

/** The sender's IANA time zone: what "remind me at 9" in the message means. */
export const senderTimezone = z
  .string()
  .max(64)
  .refine(isTimeZone, 'an IANA time zone, e.g. Europe/Berlin')
  .describe('Your IANA time zone: times in the message ("at 9") are read in it');

export const sendMessageBody = z
  .strictObject({
    text: messageText.optional(),
    files: z.array(sharedFileBody).optional(),
    timezone: senderTimezone.optional(),
  })
  .refine((body) => (body.text ?? '') !== '' || (body.files?.length ?? 0) > 0, {
    path: ['text'],
    message: noContent,
    // Said beside other problems too: `{"txt": "hi"}` is told that text is missing.
    when: ({ value }) => typeof value === 'object' && value !== null,
  });

/** An answer to a server's question (`input_required`): `content` holds an accepted form's values by field name. */
export const inputAnswerBody = z.strictObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  key: z.string().max(200).optional().describe("Which of the event's requests; the only one when absent"),
  content: z.record(z.string(), z.unknown()).optional(),
});

export const decisionBody = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: z.string().max(2000).optional(),
});

const usage = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int() });

/** The ids of the messages a turn answered (the `Butler-Message-Id` of each POST). */
const answers = z.array(z.string()).optional();

/** The events of a conversation stream (`data` of each server-sent event). */
export const conversationEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('delta'), text: z.string() }),
  z.object({ type: z.literal('tool_call'), id: z.string(), name: z.string(), args: z.unknown() }),
  z.object({
    type: z.literal('tool_result'),
    id: z.string(),
    name: z.string(),
    output: z.string(),
    error: z.string().nullable(),
  }),
  z.object({
    type: z.literal('confirm_required'),
    approvalId: z.string(),
    tool: z.string(),
    args: z.unknown(),
    summary: z.string(),
    risk: z.string(),
    expiresAt: z.string(),
    answers,
  }),
  z.object({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    scheduleId: z.string().optional().describe('A scheduled run: its task, whose prompt this is'),
  }),
  z.object({
    type: z.literal('file'),
    id: z.string(),
    name: z.string(),
    mimeType: z.string(),
    size: z.number().int(),
    url: z.string().describe('Download it here, with the same key: GET /api/v1/files/{id}'),
  }),
  z.object({
    type: z.literal('done'),
    turnId: z
      .string()
      .optional()
      .describe('The turn this ends: rate its reply with POST /api/v1/turns/{turnId}/feedback'),
    usage,
    answers,
  }),
  z.object({ type: z.literal('error'), error: z.string(), answers }),
  z.object({
    type: z.literal('input_required'),
    inputId: z.string().describe('Answer with POST /api/v1/inputs/{inputId}'),
    server: z.string(),
    tool: z.string(),
    requests: z.array(
      z.object({
        key: z.string(),
        mode: z.enum(['form', 'url']),
        message: z.string(),
        requestedSchema: z.unknown().optional().describe("A form's fields: MCP's restricted JSON Schema"),
        url: z.string().optional().describe('A page to open (`url` mode)'),
      }),
    ),
    expiresAt: z.string(),
    answers,
  }),
  z.object({
    type: z.literal('connection_required'),
    server: z
      .string()
      .describe('The OAuth server the turn waits for; it goes on once the account is connected'),
    expiresAt: z.string(),
    answers,
  }),
  z.object({
    type: z.literal('private_link'),
    text: z.string(),
    label: z.string(),
    linkId: z.string(),
    expiresAt: z.string(),
    url: z
      .string()
      .optional()
      .describe(
        'Single-use and short-lived: open it in a browser (a Connect link). Shown while the link can be used; Butler never stores it, so once it was used or expired the event has none',
      ),
  }),
]);

export const feedbackBody = z.strictObject({
  rating: z.enum(['positive', 'negative']),
  comment: z.string().max(2000).optional(),
});

export const scheduleStatuses = ['active', 'paused', 'done', 'cancelled'] as const;

/** Somewhere other than the key's own conversations: a Slack or Feishu channel or thread (admin keys only). */
const otherConversation = z
  .strictObject({
    platform: z.enum(['slack', 'feishu']),
    workspace: z.string().min(1).max(128).describe('Slack team id, Feishu tenant key'),
    channel: z.string().min(1).max(128).describe('Slack channel id, Feishu chat id'),
    thread: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("A thread to answer in; absent: the channel's top level"),
  })
  .describe('Scope read only: a Slack or Feishu conversation the runs answer in, instead of conversationId');

export const newScheduleBody = z
  .strictObject({
    conversationId: conversationId.optional().describe('Your API conversation the runs answer in'),
    conversation: otherConversation.optional(),
    prompt: z
      .string()
      .min(1)
      .max(4000)
      .describe("What Butler does when it runs, written as a person's request"),
    at: z
      .string()
      .max(64)
      .optional()
      .describe(
        'One time: ISO 8601 local time (2026-12-01T09:00), a time with an offset, or a duration (PT20M)',
      ),
    cron: z.string().max(120).optional().describe('Repeating: a 5-field cron pattern (0 9 * * 1-5)'),
    timezone: z
      .string()
      .max(64)
      .optional()
      .describe('IANA time zone `at` and `cron` are read in; default schedules.defaultTimezone'),
  })
  .refine((body) => (body.conversationId === undefined) !== (body.conversation === undefined), {
    path: ['conversationId'],
    message: 'give exactly one of conversationId and conversation',
    when: ({ value }) => typeof value === 'object' && value !== null,
  });

export const schedulesQuery = z.object({
  conversationId: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe('Your API conversation id, or a conversation key (from GET /conversations)'),
  status: z.enum(scheduleStatuses).optional().describe('Default: active and paused'),
});

export const errorBody = z.object({ error: z.string(), message: z.string() });

export const pageQuery = z.object({
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * Narrows a read to one tenant: `slack:T…` (or `E…`) or `feishu:<tenant key>`; a key limited to tenants may name
 * only one of its own (tenant-scope.ts checks it).
 */
const tenantParameter = { tenant: z.string().optional() };

/** The `?tenant=` of a read of one item (a conversation, a request). */
export const tenantQuery = z.object(tenantParameter);

export const conversationsQuery = pageQuery.extend(tenantParameter);

export const approvalsQuery = pageQuery.extend({
  status: z.enum(['pending', 'approved', 'rejected', 'expired']).optional(),
  ...tenantParameter,
});

/** zod's own message for a bad date reads "expected date, received Date": say what to send instead. */
const date = () =>
  z.coerce.date({ error: 'not a date: send ISO 8601, e.g. 2026-11-25 or 2026-11-25T09:00:00Z' });

export const auditQuery = pageQuery.extend({
  tool: z.string().optional(),
  actor: z.string().optional(),
  since: date().optional(),
  until: date().optional(),
});

export const usageQuery = z.object({
  groupBy: z.enum(['conversation', 'workspace', 'channel', 'user', 'day']).default('day'),
  since: date().optional(),
  until: date().optional(),
  ...tenantParameter,
});

/** Each problem with its field: "text: required", "limit: Too big: expected number to be <=200". */
export function describeIssues(error: z.ZodError, whole: string): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.join('.') || whole;
      // zod reports no input by default; its message says when the field was not there at all.
      const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
      return `${field}: ${missing ? 'required' : issue.message}`;
    })
    .join('; ');
}

/** Query parameters, or the problems with them (each named). */
export function parseQuery<T>(
  schema: z.ZodType<T>,
  params: URLSearchParams,
): { ok: true; value: T } | { ok: false; issues: string[] } {
  const parsed = schema.safeParse(Object.fromEntries(params));
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, issues: [describeIssues(parsed.error, 'query')] };
}
