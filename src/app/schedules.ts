import type { AppConfig } from '../config/index.js';
import type { ChatAdapter } from '../core/contracts/adapter.js';
import { decodeConversationKey } from '../core/contracts/conversation-key.js';
import type { Platform } from '../core/contracts/events.js';
import type { Logger } from '../core/contracts/logger.js';
import type { Store } from '../core/contracts/store.js';
import { createScheduleTools, ScheduleBook, Scheduler, syncConfigTasks } from '../core/schedules/index.js';
import type { ApprovalPolicy } from '../core/tools/policy.js';

/**
 * Scheduled work from the config file's `schedules:`: the book every caller makes tasks through, the chat
 * tools over it, and the scheduler that queues due runs into the inbox. Adapters are looked up when a note
 * is posted, so the map may be filled after this is built.
 */
export function createSchedules(
  config: AppConfig,
  store: Store,
  policy: ApprovalPolicy,
  adapters: ReadonlyMap<Platform, ChatAdapter>,
  logger: Logger,
) {
  const settings = config.file.schedules;
  const log = logger.child({ room: 'schedules' });
  const book = new ScheduleBook({
    store,
    policy,
    logger: log,
    limits: {
      defaultTimezone: settings.defaultTimezone,
      graceMs: settings.grace,
      minIntervalMs: settings.minInterval,
      maxActivePerPerson: settings.maxActivePerPerson,
      maxActivePerConversation: settings.maxActivePerConversation,
      maxFailuresInARow: settings.maxFailuresInARow,
    },
    notify: async (schedule, text) => {
      const address = decodeConversationKey(schedule.conversationKey);
      await adapters
        .get(address.platform)
        ?.postNotice(
          { address, ...(schedule.anchor ? { replyTo: schedule.anchor } : {}), userId: schedule.creator.id },
          text,
        );
    },
    openDirect: async (creator, workspace, note) =>
      adapters.get(creator.platform)?.openDirectConversation?.(creator, workspace, note),
  });
  return {
    book,
    tools: createScheduleTools(book),
    /** The scheduler of this process; `onQueued` wakes the worker for the runs it queued. */
    scheduler: (onQueued: () => void) =>
      new Scheduler(
        store,
        policy.people,
        { checkEveryMs: settings.checkEvery, graceMs: settings.grace },
        log,
        onQueued,
      ),
    /** Makes the config file's tasks exist (start-up). */
    syncConfig: () => syncConfigTasks(store, settings.tasks, settings.defaultTimezone, log),
  };
}
