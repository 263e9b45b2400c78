/** The schedules room: tasks that run a prompt as a turn later, once or on a cron pattern, exactly once each. */
export { type ConfigTask, syncConfigTasks } from './config-tasks.js';
export {
  type NewTaskRequest,
  type ScheduleActor,
  ScheduleBook,
  type ScheduleBookDeps,
  type ScheduleLimits,
  ScheduleRequestError,
} from './schedule-book.js';
export { createScheduleTools, describeTask } from './schedule-tools.js';
export { Scheduler, type SchedulerOptions } from './scheduler.js';
export { describeTime, isTimeZone, parseSince } from './timing.js';
