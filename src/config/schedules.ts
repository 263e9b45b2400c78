import { z } from 'zod';
import { platforms } from '../core/contracts/events.js';
import { checkCron, isTimeZone } from '../core/schedules/timing.js';

/**
 * `schedules:` in the config file: how scheduled tasks are bounded, and the team's own tasks that exist
 * without anyone asking (docs/scheduled-tasks.md). Durations are written `90s`, `15m`, `2h`, `1d`.
 */

const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `15m`, `2h`, `1d` (and `250ms`) → milliseconds. */
export const duration = z
  .string()
  .regex(/^\d+(?:\.\d+)?(?:ms|s|m|h|d)$/, 'a duration like 90s, 15m, 2h or 1d')
  .transform((text) => {
    const [, amount = '0', unit = 'ms'] = /^([\d.]+)(ms|s|m|h|d)$/.exec(text) ?? [];
    return Number(amount) * units[unit as keyof typeof units];
  });

const timeZone = z.string().refine(isTimeZone, 'an IANA time zone such as Europe/Berlin or UTC');

const taskSchema = z
  .object({
    /** Unique among the config's tasks: a task keeps its runs' history across restarts by its name. */
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, - and _'),
    conversation: z
      .object({
        platform: z.enum(platforms),
        workspace: z.string().min(1),
        channel: z.string().min(1),
        /** A thread to answer in; absent: the channel's top level. */
        thread: z.string().min(1).optional(),
      })
      .strict(),
    prompt: z.string().min(1).max(4000),
    cron: z.string().min(1),
    timezone: timeZone.optional(),
    /** Whom runs answer (their risky calls wait for someone else's approval); default: the task itself. */
    runAs: z
      .object({ id: z.string().min(1), name: z.string().min(1).optional() })
      .strict()
      .optional(),
  })
  .strict();

export const defaultScheduleSettings = {
  defaultTimezone: 'UTC',
  grace: '1h',
  minInterval: '1m',
  maxActivePerPerson: 10,
  maxActivePerConversation: 20,
  maxFailuresInARow: 3,
  checkEvery: '5s',
};

export const schedulesSchema = z
  .object({
    /** For people whose profile says no time zone, and for config tasks without one. */
    defaultTimezone: timeZone.default(defaultScheduleSettings.defaultTimezone),
    /** A run missed while Butler was down runs late within this window, else is skipped and recorded. */
    grace: duration.prefault(defaultScheduleSettings.grace),
    /** The shortest time between two runs of one task. */
    minInterval: duration.prefault(defaultScheduleSettings.minInterval),
    maxActivePerPerson: z.number().int().min(0).max(1000).default(defaultScheduleSettings.maxActivePerPerson),
    maxActivePerConversation: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(defaultScheduleSettings.maxActivePerConversation),
    /** A task whose runs fail this many times in a row pauses itself and tells its creator. */
    maxFailuresInARow: z.number().int().min(1).max(100).default(defaultScheduleSettings.maxFailuresInARow),
    /** How often each process looks for due tasks: a run starts at most this late. */
    checkEvery: duration.prefault(defaultScheduleSettings.checkEvery),
    tasks: z.array(taskSchema).default([]),
  })
  .strict()
  .superRefine((settings, context) => {
    const seen = new Set<string>();
    for (const [index, task] of settings.tasks.entries()) {
      if (seen.has(task.name))
        context.addIssue({
          code: 'custom',
          path: ['tasks', index, 'name'],
          message: `"${task.name}" is used twice`,
        });
      seen.add(task.name);
      const cron = checkCron(task.cron, task.timezone ?? settings.defaultTimezone);
      if (!cron.ok) context.addIssue({ code: 'custom', path: ['tasks', index, 'cron'], message: cron.error });
    }
  })
  .prefault({});

export type SchedulesConfig = z.infer<typeof schedulesSchema>;
export type ScheduledTaskConfig = SchedulesConfig['tasks'][number];
