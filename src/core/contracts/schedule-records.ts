import type { Person } from './events.js';
import type { Identity } from './people.js';
import type { NewInboxEvent } from './repositories.js';

/**
 * Storage contract of scheduled work: a task runs its prompt as a turn in one conversation, once at a time
 * (`runAt`) or on a cron pattern. A due run becomes an inbox event in the same transaction that records its
 * slot and moves the task to its next run, so a run is queued once however many processes look, and the
 * inbox then runs it once.
 */

export type ScheduleStatus = 'active' | 'paused' | 'done' | 'cancelled';
export type ScheduleSource = 'chat' | 'config' | 'api';

/** How a run ended, as its turn ended; `skipped`: missed past the grace window, never run. */
export type ScheduleRunOutcome = 'queued' | 'replied' | 'parked' | 'stopped' | 'failed' | 'skipped';

export interface NewSchedule {
  /** Where runs are answered. */
  conversationKey: string;
  /** Config entries' name (unique among them); absent for tasks made in chat or over the API. */
  name?: string;
  source: ScheduleSource;
  /** Who asked for it: each run's requester (its risky calls wait for someone else's approval). */
  creator: Person;
  prompt: string;
  /** Exactly one of `cron` (5 fields) and `runAt`. */
  cron: string | null;
  runAt: Date | null;
  /** IANA name the cron pattern (and the confirmation) is read in. */
  timezone: string;
  /** A platform message the runs reply under (a Feishu topic thread needs one); absent: the thread itself. */
  anchor: string | null;
  /** Whether runs go to a direct chat (no author line, personal memories allowed). */
  isDirect: boolean;
  nextRunAt: Date;
}

export interface ScheduleRecord extends Omit<NewSchedule, 'name' | 'nextRunAt'> {
  id: string;
  name: string | null;
  status: ScheduleStatus;
  /** When the next run is due; null unless active. */
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastOutcome: ScheduleRunOutcome | null;
  /** Runs in a row that failed; at the limit the task pauses itself. */
  failures: number;
  /** Why it is paused or cancelled, in words ("paused by U0ALICE", "failed 3 times in a row"). */
  statusNote: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One run of a task: a slot queued (as an inbox event) or skipped, and how it ended. */
export interface ScheduleRun {
  scheduleId: string;
  slot: Date;
  outcome: ScheduleRunOutcome;
  /** When it was queued or skipped. */
  at: Date;
}

/** What one due task's slot becomes: queued as this inbox event, or skipped; and when it is due next. */
export interface DueDecision {
  slot: Date;
  /** The inbox event that runs the slot; absent: the slot is skipped (missed past the grace window). */
  event?: NewInboxEvent;
  /** Earlier slots missed while nobody ran the task, recorded as skipped (a cron task after downtime). */
  missed: readonly Date[];
  /** The next slot; null when the task is done (a one-time task, or a cron pattern with no more runs). */
  next: Date | null;
}

export interface ScheduleFilter {
  conversationKey?: string;
  /** Made by any of these identities (every identity of a person: their tasks, wherever they made them). */
  creators?: readonly Identity[];
  /** Default: active and paused ones. */
  statuses?: readonly ScheduleStatus[];
  limit?: number;
}

export interface ScheduleRepository {
  create(schedule: NewSchedule): Promise<ScheduleRecord>;
  get(id: string): Promise<ScheduleRecord | undefined>;
  list(filter: ScheduleFilter): Promise<ScheduleRecord[]>;
  /** How many tasks are active and paused (metrics); a status no task has is absent. */
  countByStatus(): Promise<Partial<Record<'active' | 'paused', number>>>;
  /** Active tasks made by any of `creators` (a person's identities), and of a conversation (limits). */
  countActive(by: { creators?: readonly Identity[]; conversationKey?: string }): Promise<number>;
  /**
   * Locks up to `limit` active tasks due at `now` (skipping ones another process holds), asks `decide` what
   * each slot becomes, and in one transaction records the slot (once: a slot already recorded is left alone),
   * inserts its inbox event, and moves the task on. Returns the inbox ids of the runs queued.
   */
  fireDue(now: Date, limit: number, decide: (schedule: ScheduleRecord) => DueDecision): Promise<number[]>;
  /** Records how a run's turn ended; counts failures in a row (reset by any other outcome). */
  recordOutcome(
    scheduleId: string,
    slot: Date,
    outcome: ScheduleRunOutcome,
  ): Promise<ScheduleRecord | undefined>;
  /** Changes status where the task is in one of `from`; undefined when it was not. */
  setStatus(
    id: string,
    change: { status: ScheduleStatus; note: string | null; nextRunAt: Date | null },
    from: readonly ScheduleStatus[],
  ): Promise<ScheduleRecord | undefined>;
  /**
   * Pauses the active tasks of every conversation whose key starts with `keyPrefix` (a workspace Butler was
   * removed from), noting `note`; returns how many.
   */
  pauseWhere(keyPrefix: string, note: string): Promise<number>;
  /** Resumes the tasks `pauseWhere` paused with `note` under `keyPrefix` (Butler installed there again). */
  resumeWhere(keyPrefix: string, note: string): Promise<number>;
  /** Recent runs of a task, newest first. */
  runs(scheduleId: string, limit: number): Promise<ScheduleRun[]>;
  /** Config entries: creates or updates by name; returns the record. */
  upsertNamed(schedule: NewSchedule & { name: string }): Promise<ScheduleRecord>;
  /** Cancels config entries whose names are not in `keep`; returns how many. */
  cancelNamedExcept(keep: readonly string[]): Promise<number>;
  /**
   * Deletes up to `limit` records of runs recorded before `before`; returns how many. Their slots are long
   * past every task's next run, which only moves forward, so none can be queued again.
   */
  pruneRuns(before: Date, limit: number): Promise<number>;
}
