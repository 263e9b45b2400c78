import { encodeConversationKey, mainThread } from '../contracts/conversation-key.js';
import type { Platform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';
import { nextSlot } from './timing.js';

/**
 * The config file's tasks (`schedules.tasks`), made to exist at start-up: created or updated by name, and
 * cancelled when their entry is gone. An unchanged entry keeps its next run, so a restart neither skips nor
 * repeats a slot; its runs' history stays with its name.
 */

export interface ConfigTask {
  name: string;
  conversation: { platform: Platform; workspace: string; channel: string; thread?: string | undefined };
  prompt: string;
  cron: string;
  timezone?: string | undefined;
  runAs?: { id: string; name?: string | undefined } | undefined;
}

export async function syncConfigTasks(
  store: Store,
  tasks: readonly ConfigTask[],
  defaultTimezone: string,
  logger: Logger,
  now = new Date(),
): Promise<void> {
  for (const task of tasks) {
    const timezone = task.timezone ?? defaultTimezone;
    const nextRunAt = nextSlot(task.cron, timezone, now);
    if (!nextRunAt) {
      logger.warn({ task: task.name }, 'a config task whose pattern never runs again was left out');
      continue;
    }
    const { platform } = task.conversation;
    await store.schedules.upsertNamed({
      name: task.name,
      source: 'config',
      conversationKey: encodeConversationKey({
        ...task.conversation,
        thread: task.conversation.thread ?? mainThread,
      }),
      // Without `runAs` the task answers to itself: nobody's memories, and every risky call needs an approver.
      creator: task.runAs
        ? { platform, id: task.runAs.id, ...(task.runAs.name ? { name: task.runAs.name } : {}) }
        : { platform, id: `schedule:${task.name}`, name: `scheduled task ${task.name}` },
      prompt: task.prompt,
      cron: task.cron,
      runAt: null,
      timezone,
      anchor: null,
      isDirect: false,
      nextRunAt,
    });
  }
  const removed = await store.schedules.cancelNamedExcept(tasks.map((task) => task.name));
  if (removed > 0) logger.info({ removed }, 'config tasks no longer in the config file were cancelled');
}
