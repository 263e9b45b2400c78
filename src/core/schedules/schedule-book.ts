import type { TurnOutcome } from '../contracts/adapter.js';
import { decodeConversationKey, encodeConversationKey } from '../contracts/conversation-key.js';
import { NotAllowedError } from '../contracts/errors.js';
import type { ConversationAddress, Person } from '../contracts/events.js';
import { isUuid } from '../contracts/ids.js';
import type { Logger } from '../contracts/logger.js';
import type { Identity } from '../contracts/people.js';
import type { ScheduleRecord, ScheduleSource, ScheduleStatus, Store } from '../contracts/store.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import { checkCron, describeTime, isTimeZone, nextSlot, parseMoment, shortestGapMs } from './timing.js';

/**
 * The one place tasks are made, listed, paused and cancelled, whoever asks (the chat tools, the HTTP API, the
 * console): the limits and the permissions are checked here. It also hears how each run ended, and pauses a
 * task whose runs keep failing.
 */

export interface ScheduleLimits {
  defaultTimezone: string;
  graceMs: number;
  minIntervalMs: number;
  maxActivePerPerson: number;
  maxActivePerConversation: number;
  maxFailuresInARow: number;
}

/** Who acts on a task: a person (the creator or an approver may change it), or an admin (API, console). */
export type ScheduleActor = { person: Person; admin?: false } | { admin: true; name: string };

/** A request the caller can fix (a bad time, a limit reached): its message is for the person. */
export class ScheduleRequestError extends Error {}

export interface NewTaskRequest {
  creator: Person;
  /** Where it was asked: the runs go here unless `direct`. */
  address: ConversationAddress;
  prompt: string;
  at?: string | undefined;
  cron?: string | undefined;
  timezone?: string | undefined;
  /** The message it was asked under, for platforms that reply under a message. */
  anchor?: string | undefined;
  isDirect: boolean;
  /** Runs go to the creator's direct chat with Butler ("remind me"). */
  direct?: boolean | undefined;
  source: ScheduleSource;
}

export interface ScheduleBookDeps {
  store: Store;
  policy: ApprovalPolicy;
  limits: ScheduleLimits;
  logger: Logger;
  now?: () => Date;
  /** Posts a short note to a task's conversation (a task paused after failures). */
  notify: (schedule: ScheduleRecord, text: string) => Promise<void>;
  /** The creator's direct chat, opened with `note` posted; absent: "remind me" stays where it was asked. */
  openDirect?: (creator: Person, workspace: string, note: string) => Promise<ConversationAddress | undefined>;
}

const maxPromptChars = 4000;
const outcomes: Partial<Record<TurnOutcome, ScheduleRecord['lastOutcome']>> = {
  replied: 'replied',
  parked: 'parked',
  stopped: 'stopped',
  failed: 'failed',
};

export class ScheduleBook {
  private readonly now: () => Date;

  constructor(private readonly deps: ScheduleBookDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  get limits(): ScheduleLimits {
    return this.deps.limits;
  }

  /** Makes a task; returns it with the sentence that confirms it ("next run: Mon 30 Nov, 09:00 (Europe/Berlin)"). */
  async create(request: NewTaskRequest): Promise<{ schedule: ScheduleRecord; confirmation: string }> {
    const { store, limits } = this.deps;
    const prompt = request.prompt.trim();
    if (!prompt)
      throw new ScheduleRequestError('the task needs a prompt: what Butler should do when it runs');
    if (prompt.length > maxPromptChars)
      throw new ScheduleRequestError(`the prompt is ${prompt.length} characters; at most ${maxPromptChars}`);
    const timezone = request.timezone ?? request.creator.timezone ?? limits.defaultTimezone;
    if (!isTimeZone(timezone))
      throw new ScheduleRequestError(`"${timezone}" is not an IANA time zone (for example Europe/Berlin)`);
    const when = this.when(request, timezone);
    const creators = this.deps.policy.people.identitiesOf(request.creator);
    if ((await store.schedules.countActive({ creators })) >= limits.maxActivePerPerson)
      throw new ScheduleRequestError(
        `${request.creator.name ?? request.creator.id} already has ${limits.maxActivePerPerson} active tasks, the most allowed; cancel one first`,
      );
    let address = request.address;
    let isDirect = request.isDirect;
    let anchor = request.anchor ?? null;
    const next = describeTime(when.first, timezone);
    if (request.direct && !request.isDirect) {
      const direct = await this.deps.openDirect?.(
        request.creator,
        request.address.workspace,
        `I'll post your scheduled task here, next at ${next}: "${prompt}"`,
      );
      if (direct) {
        address = direct;
        isDirect = true;
        anchor = null;
      }
    }
    const conversationKey = encodeConversationKey(address);
    if ((await store.schedules.countActive({ conversationKey })) >= limits.maxActivePerConversation)
      throw new ScheduleRequestError(
        `this conversation already has ${limits.maxActivePerConversation} active tasks, the most allowed`,
      );
    const schedule = await store.schedules.create({
      conversationKey,
      source: request.source,
      creator: request.creator,
      prompt,
      cron: when.cron,
      runAt: when.cron ? null : when.first,
      timezone,
      anchor,
      isDirect,
      nextRunAt: when.first,
    });
    const repeat = when.cron ? `, then on "${when.cron}" (${timezone})` : '';
    const place = address === request.address ? '' : ' in your direct chat with me';
    return {
      schedule,
      confirmation: `Task ${schedule.id} scheduled${place}: next run ${next}${repeat}.`,
    };
  }

  private when(request: NewTaskRequest, timezone: string): { cron: string | null; first: Date } {
    const now = this.now();
    if ((request.at === undefined) === (request.cron === undefined))
      throw new ScheduleRequestError('give exactly one of "at" (one time) and "cron" (repeating)');
    if (request.at !== undefined) {
      const moment = parseMoment(request.at, timezone, now);
      if (!moment.ok) throw new ScheduleRequestError(moment.error);
      if (moment.value.getTime() <= now.getTime())
        throw new ScheduleRequestError(`${describeTime(moment.value, timezone)} is in the past`);
      return { cron: null, first: moment.value };
    }
    const cron = checkCron(request.cron ?? '', timezone);
    if (!cron.ok) throw new ScheduleRequestError(cron.error);
    const gap = shortestGapMs(cron.value, timezone, now);
    if (gap < this.deps.limits.minIntervalMs)
      throw new ScheduleRequestError(
        `"${cron.value}" runs ${Math.round(gap / 1000)} s apart; runs must be at least ${Math.round(this.deps.limits.minIntervalMs / 1000)} s apart`,
      );
    const first = nextSlot(cron.value, timezone, now);
    if (!first) throw new ScheduleRequestError(`"${cron.value}" never runs again`);
    return { cron: cron.value, first };
  }

  /**
   * Tasks a person sees: their own in `conversationKey`, made through any of their identities (all of them in
   * it for an approver or admin).
   */
  async list(actor: ScheduleActor, conversationKey?: string, statuses?: readonly ScheduleStatus[]) {
    const { policy } = this.deps;
    const seesAll = actor.admin || policy.isApprover(actor.person, conversationKey);
    return this.deps.store.schedules.list({
      ...(conversationKey ? { conversationKey } : {}),
      ...(seesAll ? {} : { creators: policy.people.identitiesOf(actor.person) }),
      ...(statuses ? { statuses } : {}),
    });
  }

  /** Whether `person` made the task, through any of their identities (an API key's task is its person's). */
  isCreator(schedule: Pick<ScheduleRecord, 'creator'>, person: Identity): boolean {
    return this.deps.policy.people.same(schedule.creator, person);
  }

  /** The task, or undefined for an id that names none (one that is no UUID included). */
  async get(id: string): Promise<ScheduleRecord | undefined> {
    return isUuid(id) ? this.deps.store.schedules.get(id) : undefined;
  }

  cancel(id: string, actor: ScheduleActor): Promise<ScheduleRecord> {
    return this.change(id, actor, 'cancelled', ['active', 'paused']);
  }

  pause(id: string, actor: ScheduleActor): Promise<ScheduleRecord> {
    return this.change(id, actor, 'paused', ['active']);
  }

  /** Resumes at the next slot after now (a paused task does not catch up on what it missed). */
  resume(id: string, actor: ScheduleActor): Promise<ScheduleRecord> {
    return this.change(id, actor, 'active', ['paused']);
  }

  private async change(
    id: string,
    actor: ScheduleActor,
    status: ScheduleStatus,
    from: readonly ScheduleStatus[],
  ): Promise<ScheduleRecord> {
    const { store, policy } = this.deps;
    const schedule = await this.get(id);
    if (!schedule) throw new ScheduleRequestError(`there is no task ${id}`);
    // An approver changes the tasks of conversations of their own platform: a Slack approver is no one to an
    // API key's task (it may be the key's private work), whatever the key's conversation.
    const samePlatform =
      !actor.admin && decodeConversationKey(schedule.conversationKey).platform === actor.person.platform;
    const approver = samePlatform && policy.isApprover(actor.person, schedule.conversationKey);
    if (!actor.admin && !this.isCreator(schedule, actor.person) && !approver)
      throw new NotAllowedError(
        'Only the person who made this task, or an approver of its conversation, may change it.',
      );
    const who = actor.admin ? actor.name : (actor.person.name ?? actor.person.id);
    const nextRunAt = status === 'active' ? this.resumedAt(schedule) : null;
    if (status === 'active' && !nextRunAt)
      throw new ScheduleRequestError('its time has passed: schedule it again');
    const changed = await store.schedules.setStatus(
      id,
      { status, note: status === 'active' ? null : `${status} by ${who}`, nextRunAt },
      from,
    );
    if (!changed)
      throw new ScheduleRequestError(`task ${id} is ${schedule.status}; it cannot be ${status} now`);
    return changed;
  }

  private resumedAt(schedule: ScheduleRecord): Date | null {
    const now = this.now();
    if (schedule.cron) return nextSlot(schedule.cron, schedule.timezone, now);
    return schedule.runAt && schedule.runAt > now ? schedule.runAt : null;
  }

  /**
   * A run found its creator no longer allowed to talk to Butler where it runs (removed from the allowlist since
   * the task was made): the task pauses with a note the console shows, and the admin hears of it in the log. The
   * creator is not told there: they may no longer be spoken to in that place.
   */
  async creatorNotAllowed(run: { id: string; slot: string }): Promise<void> {
    const { store, logger } = this.deps;
    await store.schedules.recordOutcome(run.id, new Date(run.slot), 'failed');
    const note = 'paused: its creator is no longer allowed to talk to Butler there';
    const paused = await store.schedules.setStatus(run.id, { status: 'paused', note, nextRunAt: null }, [
      'active',
    ]);
    logger.warn(
      { schedule: run.id, paused: paused !== undefined },
      'a scheduled run was refused: its creator is no longer in the access allowlist',
    );
  }

  /** How a run ended (the worker's dispatcher calls it): failures in a row past the limit pause the task. */
  async runEnded(run: { id: string; slot: string }, outcome: TurnOutcome): Promise<void> {
    const recorded = outcomes[outcome];
    // An interrupted run is retried after the restart: it has not ended.
    if (!recorded) return;
    const { store, limits } = this.deps;
    const schedule = await store.schedules.recordOutcome(run.id, new Date(run.slot), recorded);
    if (!schedule || schedule.failures < limits.maxFailuresInARow || schedule.status !== 'active') return;
    const note = `paused after ${schedule.failures} failed runs in a row`;
    const paused = await store.schedules.setStatus(schedule.id, { status: 'paused', note, nextRunAt: null }, [
      'active',
    ]);
    if (!paused) return;
    this.deps.logger.warn({ schedule: schedule.id, failures: schedule.failures }, 'scheduled task paused');
    const creator = schedule.creator.name ?? schedule.creator.id;
    await this.deps
      .notify(
        schedule,
        `${creator}, your scheduled task "${schedule.prompt}" failed ${schedule.failures} times in a row, so I paused it (task ${schedule.id}). An admin can resume it from the console, or ask me to schedule it again.`,
      )
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'could not tell the creator'));
  }
}
