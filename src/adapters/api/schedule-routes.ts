import type { z } from 'zod';
import {
  decodeConversationKey,
  encodeConversationKey,
  mainThread,
} from '../../core/contracts/conversation-key.js';
import { NotAllowedError } from '../../core/contracts/errors.js';
import type { ConversationAddress, Person, Platform } from '../../core/contracts/events.js';
import type { ScheduleRecord, Store } from '../../core/contracts/store.js';
import { type ScheduleActor, type ScheduleBook, ScheduleRequestError } from '../../core/schedules/index.js';
import { query } from './admin-routes.js';
import type { Caller } from './auth.js';
import { apiAddress, checkedId } from './conversation-routes.js';
import { ApiError, readJson, sendJson } from './http-json.js';
import type { Route } from './routes.js';
import { describeIssues, newScheduleBody, schedulesQuery } from './schemas.js';

/**
 * Scheduled tasks over HTTP, all through the schedule book (its limits and permissions). A key makes tasks in
 * its own conversations as itself; a key with the `read` scope is an admin: it sees and changes every task,
 * and may put one into a Slack or Feishu conversation.
 */

export interface ScheduleRouteDependencies {
  book: ScheduleBook;
  /** Runs' history (the book makes and changes tasks; what happened to them is stored). */
  store: Store;
  /** Whether Butler answers on a platform in this process (a task in a Slack channel needs Slack). */
  answersOn: (platform: Platform) => boolean;
}

/** How many of a task's latest runs its detail shows. */
const recentRuns = 20;

const isAdmin = (caller: Caller) => caller.scopes.includes('read');

/** The key as a person: its name is who it is, on platform `api`. */
const keyPerson = (caller: Caller): Person => ({ platform: 'api', id: caller.name, name: caller.name });

const actorOf = (caller: Caller): ScheduleActor =>
  isAdmin(caller) ? { admin: true, name: caller.name } : { person: keyPerson(caller) };

/** A task as the API shows it; `conversationId` only for the caller's own API conversations. */
export function scheduleItem(schedule: ScheduleRecord, caller: Caller) {
  const address = decodeConversationKey(schedule.conversationKey);
  const own = address.platform === 'api' && address.workspace === caller.name;
  const { platform, id, name } = schedule.creator;
  return {
    id: schedule.id,
    conversationKey: schedule.conversationKey,
    conversationId: own ? address.channel : null,
    address,
    name: schedule.name,
    source: schedule.source,
    creator: { platform, id, ...(name ? { name } : {}) },
    prompt: schedule.prompt,
    cron: schedule.cron,
    runAt: schedule.runAt,
    timezone: schedule.timezone,
    status: schedule.status,
    statusNote: schedule.statusNote,
    nextRunAt: schedule.nextRunAt,
    lastRunAt: schedule.lastRunAt,
    lastOutcome: schedule.lastOutcome,
    failures: schedule.failures,
    createdAt: schedule.createdAt,
  };
}

/** The task, or 404. */
async function existing(book: ScheduleBook, id: string | undefined): Promise<ScheduleRecord> {
  const schedule = id ? await book.get(id) : undefined;
  if (!schedule) throw new ApiError(404, 'not_found', `There is no task ${id}.`);
  return schedule;
}

export function scheduleRoutes(deps: ScheduleRouteDependencies): Route[] {
  const { book } = deps;

  /** Where a new task runs and whose request its runs are. */
  function placeOf(
    caller: Caller,
    body: z.infer<typeof newScheduleBody>,
  ): { address: ConversationAddress; creator: Person; isDirect: boolean } {
    if (!body.conversation)
      return {
        address: apiAddress(caller, body.conversationId ?? ''),
        creator: keyPerson(caller),
        isDirect: true,
      };
    const { platform, workspace, channel, thread } = body.conversation;
    if (!isAdmin(caller))
      throw new ApiError(
        403,
        'forbidden',
        `Only a key with the read scope may schedule into a ${platform} conversation; ${caller.name} may use its own (conversationId).`,
      );
    if (!deps.answersOn(platform))
      throw new ApiError(400, 'platform_unavailable', `Butler is not connected to ${platform} here.`);
    // The task is the key's wherever it runs: its runs ask as the key (platform `api`), so the key is their
    // requester and never counts as their approver, and no person of that platform is spoken for.
    return {
      address: { platform, workspace, channel, thread: thread ?? mainThread },
      creator: keyPerson(caller),
      isDirect: false,
    };
  }

  const change =
    (action: 'cancel' | 'pause' | 'resume'): Route['handle'] =>
    async ({ response, caller, params }) => {
      const schedule = await existing(book, params[0]);
      try {
        sendJson(response, 200, scheduleItem(await book[action](schedule.id, actorOf(caller)), caller));
      } catch (error) {
        if (error instanceof NotAllowedError) throw new ApiError(403, 'not_allowed', error.message);
        // The task exists (checked above): what the book refuses is a status that cannot change so.
        if (error instanceof ScheduleRequestError) throw new ApiError(409, 'status_conflict', error.message);
        throw error;
      }
    };

  return [
    {
      method: 'GET',
      pattern: /^\/schedules$/,
      scope: 'any',
      async handle({ response, caller, query: params }) {
        const { conversationId, status } = query(schedulesQuery, params);
        const key = conversationId?.includes(':')
          ? conversationId
          : conversationId && encodeConversationKey(apiAddress(caller, checkedId(conversationId)));
        const listed = await book.list(actorOf(caller), key, status ? [status] : undefined);
        // The book shows approvers everyone's tasks in a conversation; a key without `read` reads no other
        // conversation, so it sees its own person's tasks only (made through any of their identities).
        const admin = isAdmin(caller);
        const items = listed.filter((schedule) => admin || book.isCreator(schedule, keyPerson(caller)));
        sendJson(response, 200, { items: items.map((schedule) => scheduleItem(schedule, caller)) });
      },
    },
    {
      method: 'POST',
      pattern: /^\/schedules$/,
      scope: 'chat',
      async handle({ request, response, caller }) {
        const parsed = newScheduleBody.safeParse(await readJson(request));
        if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, 'body'));
        const { prompt, at, cron, timezone } = parsed.data;
        const place = placeOf(caller, parsed.data);
        try {
          const { schedule, confirmation } = await book.create({
            ...place,
            prompt,
            at,
            cron,
            timezone,
            source: 'api',
          });
          sendJson(response, 201, { ...scheduleItem(schedule, caller), confirmation });
        } catch (error) {
          if (error instanceof ScheduleRequestError)
            throw new ApiError(400, 'invalid_schedule', error.message);
          throw error;
        }
      },
    },
    {
      method: 'GET',
      pattern: /^\/schedules\/([^/]+)$/,
      scope: 'any',
      async handle({ response, caller, params }) {
        const schedule = await existing(book, params[0]);
        if (!isAdmin(caller) && !book.isCreator(schedule, keyPerson(caller)))
          throw new ApiError(403, 'not_allowed', `Task ${schedule.id} is not one of ${caller.name}'s.`);
        const runs = await deps.store.schedules.runs(schedule.id, recentRuns);
        sendJson(response, 200, {
          ...scheduleItem(schedule, caller),
          runs: runs.map(({ slot, outcome, at }) => ({ slot, outcome, at })),
        });
      },
    },
    { method: 'DELETE', pattern: /^\/schedules\/([^/]+)$/, scope: 'any', handle: change('cancel') },
    { method: 'POST', pattern: /^\/schedules\/([^/]+)\/pause$/, scope: 'any', handle: change('pause') },
    { method: 'POST', pattern: /^\/schedules\/([^/]+)\/resume$/, scope: 'any', handle: change('resume') },
  ];
}
