import { z } from 'zod';
import { connectionPaths } from './openapi-connections.js';
import { anyJson, errors, idParameter, json, parameters, schema } from './openapi-parts.js';
import { schedulePaths } from './openapi-schedules.js';
import {
  approvalsQuery,
  auditQuery,
  conversationEvent,
  conversationsQuery,
  decisionBody,
  errorBody,
  feedbackBody,
  inputAnswerBody,
  messageText,
  pageQuery,
  senderTimezone,
  sendMessageBody,
  tenantQuery,
  usageQuery,
} from './schemas.js';

/** The OpenAPI 3.1 document of `/api/v1`, generated from the same zod schemas the routes validate with. */

/** Every stream takes one of its key's places, and one of Butler's (`api.streams` in the config file). */
const tooManyStreams = {
  '429': {
    description:
      '`too_many_streams`: the key, or Butler in all, has as many open streams as allowed; nothing was done',
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
    ...json(errorBody),
  },
};
const binary = { type: 'string', contentMediaType: 'application/octet-stream' };
/** The same message as JSON (files in base64) or as a form with file parts. */
const messageBody = {
  required: true,
  content: {
    'application/json': { schema: schema(sendMessageBody) },
    'multipart/form-data': {
      schema: {
        type: 'object',
        properties: {
          text: schema(messageText),
          timezone: schema(senderTimezone),
          files: {
            type: 'array',
            items: binary,
            description: 'One part per file, under any field name; its filename and Content-Type are kept',
          },
        },
      },
    },
  },
};
const eventStream = {
  description:
    'Server-sent events: `data` holds one JSON object per event (discriminated by `type`), `id` the event id for Last-Event-ID. A stream with nothing new for `api.streams.idleSeconds` (default 60) ends; resume with Last-Event-ID.',
  content: { 'text/event-stream': { schema: schema(conversationEvent) } },
};

export function openApiDocument(serverUrl: string) {
  const details = (operationId: string, summary: string, id: string) => ({
    get: {
      operationId,
      summary,
      'x-scope': 'read',
      parameters: [idParameter('id', id), ...parameters(tenantQuery)],
      responses: {
        '200': anyJson(
          '{batchId, address, calls[{approvalId, toolName, risk, status, summary, argumentsJson, …}], requesters, expiresAt, link?}',
        ),
        '404': { description: 'No such request', ...json(errorBody) },
        ...errors,
      },
    },
  });
  const read = (operationId: string, summary: string, query?: z.ZodObject) => ({
    get: {
      operationId,
      summary,
      'x-scope': 'read',
      ...(query ? { parameters: parameters(query) } : {}),
      responses: { '200': anyJson(summary), ...errors },
    },
  });
  return {
    openapi: '3.1.0',
    info: { title: 'Butler API', version: '1', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/conversations/{id}/messages': {
        post: {
          operationId: 'sendMessage',
          summary: 'Send a message and stream the turn that answers it',
          'x-scope': 'chat',
          parameters: [
            idParameter('id', 'Your conversation id (letters, digits, . _ -)'),
            { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string' } },
          ],
          requestBody: messageBody,
          responses: {
            '200': {
              ...eventStream,
              headers: {
                'Butler-Message-Id': {
                  description: "This message's id, as the turn's end lists it in `answers`",
                  schema: { type: 'string' },
                },
              },
            },
            '409': { description: 'Duplicate Idempotency-Key', ...json(errorBody) },
            '413': {
              description:
                '`file_too_large`, `files_too_large` or `payload_too_large`: past `files.maxFileMegabytes` or `files.maxTurnMegabytes`; nothing was accepted (more files than `files.maxFilesPerTurn`: 400 `too_many_files`)',
              ...json(errorBody),
            },
            ...tooManyStreams,
            ...errors,
          },
        },
      },
      '/conversations/{id}/stop': {
        post: {
          operationId: 'stopConversation',
          summary:
            'Stop the turn running in a conversation, within a second: the reply keeps what was written, marked "Stopped by"; a message `stop` does the same',
          'x-scope': 'chat',
          parameters: [idParameter('id', 'Your conversation id')],
          responses: {
            '202': {
              description: 'A turn was running and is stopping; its stream ends with `done`',
              ...json(z.object({ status: z.literal('stopping') })),
            },
            '200': {
              description: 'Nothing was running',
              ...json(z.object({ status: z.literal('idle') })),
            },
            ...errors,
          },
        },
      },
      '/conversations/{id}/events': {
        get: {
          operationId: 'followConversation',
          summary: 'Resume a conversation stream after an event, up to the next end of a turn',
          'x-scope': 'chat',
          parameters: [
            idParameter('id', 'Your conversation id'),
            { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
            { name: 'after', in: 'query', required: false, schema: { type: 'integer' } },
          ],
          responses: {
            '200': eventStream,
            '404': { description: 'No conversation with this id for this key', ...json(errorBody) },
            ...tooManyStreams,
            ...errors,
          },
        },
      },
      '/files/{id}': {
        get: {
          operationId: 'downloadFile',
          summary: 'A stored file: one Butler sent (a `file` event links here) or one shared with it',
          'x-scope': 'read (every conversation), or any key for files of its own API conversations',
          parameters: [idParameter('id', 'The file id (`id` of a `file` event)')],
          responses: {
            '200': {
              description: 'The bytes, as an attachment',
              headers: {
                'Content-Disposition': {
                  description: "attachment; filename*=UTF-8''<the file's name>",
                  schema: { type: 'string' },
                },
              },
              content: { 'application/octet-stream': { schema: binary } },
            },
            '404': { description: 'No such file, or not one this key may read', ...json(errorBody) },
            ...errors,
          },
        },
      },
      '/approvals/{id}/decision': {
        post: {
          operationId: 'decideApproval',
          summary: 'Approve or reject a pending tool call',
          'x-scope': 'approve',
          parameters: [
            idParameter('id', 'The approval id (from confirm_required or GET /approvals)'),
            ...parameters(tenantQuery),
          ],
          requestBody: { required: true, ...json(decisionBody) },
          responses: {
            '200': anyJson('Decided'),
            '404': { description: 'No such approval', ...json(errorBody) },
            '409': { description: 'Already decided or expired', ...json(errorBody) },
            ...errors,
          },
        },
      },
      '/me': {
        get: {
          operationId: 'getMe',
          summary: "The calling key's name and scopes, and the tenants it is limited to (if it is)",
          responses: { '200': anyJson('{name, scopes, tenants?}'), '401': errors['401'] },
        },
      },
      '/conversations': read(
        'listConversations',
        'Conversations, most recently active first',
        conversationsQuery,
      ),
      '/conversations/{key}': {
        get: {
          operationId: 'getConversation',
          summary: 'One conversation: summary, messages, compactions',
          'x-scope': 'read',
          parameters: [
            idParameter('key', 'A conversation key, or the id of your own API conversation'),
            ...parameters(tenantQuery),
          ],
          responses: {
            '200': anyJson('The conversation'),
            '404': { description: 'Not found', ...json(errorBody) },
            ...errors,
          },
        },
      },
      '/approvals': read('listApprovals', 'Approvals, newest first', approvalsQuery),
      '/approvals/{id}': details('getApproval', 'One approval with its arguments whole', 'The approval id'),
      '/approval-batches/{id}': details(
        'getApprovalBatch',
        'Every call of one approval card, in card order, with its arguments whole',
        'The batch id of the card',
      ),
      '/turns/{id}/feedback': {
        post: {
          operationId: 'rateTurn',
          summary: "Rate a turn's reply (again: the new rating replaces yours)",
          'x-scope': 'chat',
          parameters: [idParameter('id', "The turn id (from the turn's done event)")],
          requestBody: { required: true, ...json(feedbackBody) },
          responses: {
            '200': anyJson('Stored: the turn, the rating and its comment as kept'),
            '404': { description: "`not_a_reply`: no reply of this key's conversations", ...json(errorBody) },
            ...errors,
          },
        },
      },
      '/inputs/{id}': {
        post: {
          operationId: 'answerInput',
          summary:
            "Answers what a server asked this key mid-call (the stream's `input_required` event): once, before it expires",
          'x-scope': 'chat',
          parameters: [idParameter('id', 'The `inputId` of the `input_required` event')],
          requestBody: { required: true, ...json(inputAnswerBody) },
          responses: {
            '200': anyJson(
              '{ok: true, status: answered | partly}: the turn goes on once every request is answered',
            ),
            ...errors,
            '400': {
              description: '`invalid`: `fields` names what to fix, by field (or `invalid_body`)',
              ...json(errorBody),
            },
            '403': {
              description: '`not_yours`: another key asked for the call (or the key lacks the scope)',
              ...json(errorBody),
            },
            '404': { description: '`missing`: no such question of this key', ...json(errorBody) },
            '409': { description: '`closed` or `answered_already`: nothing changed', ...json(errorBody) },
          },
        },
      },
      ...schedulePaths,
      ...connectionPaths,
      '/feedback': read('listFeedback', 'Ratings of replies, most recently given first', pageQuery),
      '/audit': read('listAudit', 'Audit log of tool calls, newest first', auditQuery),
      '/usage': read('getUsage', 'Token usage and cost, rolled up', usageQuery),
      '/budgets': read('listBudgets', 'Each configured budget limit: used and allowed in its current period'),
      '/installations': read(
        'listInstallations',
        'Slack workspaces installed over OAuth (with SLACK_CLIENT_ID): installer, scopes granted and missing, state; then Feishu tenants of several apps or a store app, with the app serving each; never a token',
      ),
      '/events': {
        get: {
          operationId: 'followEvents',
          summary: 'Live events across all Butler processes (turns, approvals, compactions)',
          'x-scope': 'read',
          responses: {
            '200': { description: 'Server-sent events', content: { 'text/event-stream': {} } },
            ...tooManyStreams,
            ...errors,
          },
        },
      },
    },
  };
}
