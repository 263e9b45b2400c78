import { anyJson, errors, idParameter, json, parameters } from './openapi-parts.js';
import { errorBody, newScheduleBody, schedulesQuery } from './schemas.js';

/** The scheduled-task paths of the OpenAPI document (docs/scheduled-tasks.md says how tasks run). */

const item =
  '{id, conversationKey, conversationId (your own API conversation, else null), address, name, source, creator, prompt, cron, runAt, timezone, status, statusNote, nextRunAt, lastRunAt, lastOutcome, failures, createdAt}';

/** Who may: the `read` scope is an admin's (every task); other keys act as themselves. */
const scope = 'any: a read key may change every task; another key its own (or any, if it is an approver)';

const notFound = { '404': { description: 'No such task', ...json(errorBody) } };

const change = (operationId: string, summary: string, from: string) => ({
  operationId,
  summary,
  'x-scope': scope,
  parameters: [idParameter('id', 'The task id')],
  responses: {
    '200': anyJson(`The task as it is now: ${item}`),
    ...errors,
    '403': { description: "`not_allowed`: not this key's task", ...json(errorBody) },
    ...notFound,
    '409': { description: `\`status_conflict\`: the task is not ${from}`, ...json(errorBody) },
  },
});

export const schedulePaths = {
  '/schedules': {
    get: {
      operationId: 'listSchedules',
      summary:
        'Scheduled tasks, next due first (at most 100): a read key sees every task, another key its own',
      'x-scope': 'any',
      parameters: parameters(schedulesQuery),
      responses: { '200': anyJson(`{items: [${item}]}`), ...errors },
    },
    post: {
      operationId: 'createSchedule',
      summary:
        'Schedule a prompt to run as a turn later: once (`at`) or on a cron pattern; the runs answer in the conversation like any reply',
      'x-scope': 'chat (a Slack or Feishu `conversation`: read too)',
      requestBody: { required: true, ...json(newScheduleBody) },
      responses: {
        '201': anyJson(`The task, and the sentence that confirms it: ${item.slice(0, -1)}, confirmation}`),
        ...errors,
        '400': {
          description:
            '`invalid_body`, or `invalid_schedule`: a bad time, cron pattern or time zone, runs too often, or a limit reached (the message says which)',
          ...json(errorBody),
        },
        '413': { description: '`payload_too_large`', ...json(errorBody) },
      },
    },
  },
  '/schedules/{id}': {
    get: {
      operationId: 'getSchedule',
      summary: 'One task with its 20 latest runs',
      'x-scope': 'any: a read key every task, another key its own',
      parameters: [idParameter('id', 'The task id')],
      responses: {
        '200': anyJson(`${item.slice(0, -1)}, runs: [{slot, outcome, at}]}`),
        ...errors,
        '403': { description: "`not_allowed`: not this key's task", ...json(errorBody) },
        ...notFound,
      },
    },
    delete: change('cancelSchedule', 'Cancel a task', 'active or paused'),
  },
  '/schedules/{id}/pause': {
    post: change('pauseSchedule', 'Pause a task: it does not run until resumed', 'active'),
  },
  '/schedules/{id}/resume': {
    post: change(
      'resumeSchedule',
      'Resume a paused task at its next slot (missed runs are not caught up)',
      'paused (and still has a time to come)',
    ),
  },
};
