import { Cron } from 'croner';

/**
 * When tasks run: cron patterns and one-time moments read in a time zone, with croner doing the calendar
 * (DST included: a time that does not exist runs at the first one after it, a time that happens twice runs
 * once). Everything here is pure and takes `now`, so tests control the clock.
 */

export type When = { cron: string; runAt: null } | { cron: null; runAt: Date };

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Whether `name` is an IANA time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name.length > 0;
  } catch {
    return false;
  }
}

/** A paused croner job: used only to compute times, never to run anything. */
function cronJob(pattern: string, timezone: string): Cron {
  return new Cron(pattern, { timezone, paused: true });
}

/** A 5-field pattern croner accepts, or why not (seconds are not offered: runs are a minute apart at least). */
export function checkCron(pattern: string, timezone: string): Checked<string> {
  const trimmed = pattern.trim().replace(/\s+/g, ' ');
  const fields = trimmed.split(' ').length;
  if (fields !== 5)
    return {
      ok: false,
      error: `"${pattern}" has ${fields} fields; a cron pattern here has 5: minute hour day-of-month month day-of-week`,
    };
  try {
    cronJob(trimmed, timezone);
    return { ok: true, value: trimmed };
  } catch (error) {
    return { ok: false, error: `"${pattern}" is not a cron pattern: ${(error as Error).message}` };
  }
}

/** `PT20M`, `P1DT2H`: an ISO 8601 duration in milliseconds (days taken as 24 hours), or undefined. */
function durationMs(text: string): number | undefined {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/i.exec(text.trim());
  if (!match || text.trim().length <= 2 || /T$/i.test(text.trim())) return undefined;
  const [, days, hours, minutes, seconds] = match.map((part) => Number(part ?? 0));
  return (((days ?? 0) * 24 + (hours ?? 0)) * 60 + (minutes ?? 0)) * 60_000 + (seconds ?? 0) * 1000;
}

/**
 * A one-time moment: an ISO 8601 duration from now (`PT20M`), a time with an offset (`…Z`, `…+01:00`), or a
 * local date and time (`2026-12-01T09:00`) read in `timezone`.
 */
export function parseMoment(text: string, timezone: string, now: Date): Checked<Date> {
  const after = durationMs(text);
  if (after !== undefined) return { ok: true, value: new Date(now.getTime() + after) };
  const trimmed = text.trim();
  if (/[zZ]$|[+-]\d{2}:?\d{2}$/.test(trimmed)) {
    const absolute = new Date(trimmed);
    if (!Number.isNaN(absolute.getTime())) return { ok: true, value: absolute };
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(trimmed)) {
    try {
      // croner reads an ISO time without an offset in the job's time zone.
      const local = cronJob(trimmed.length === 16 ? `${trimmed}:00` : trimmed, timezone).nextRun(new Date(0));
      if (local) return { ok: true, value: local };
    } catch {
      // Falls through to the error below.
    }
  }
  return {
    ok: false,
    error: `"${text}" is not a time: give an ISO 8601 time (2026-12-01T09:00, with or without an offset) or a duration from now (PT20M)`,
  };
}

/** A moment in the past: an ISO 8601 duration back from now (`P1D`), or a time as `parseMoment` reads one. */
export function parseSince(text: string, timezone: string, now: Date): Checked<Date> {
  const back = durationMs(text);
  if (back !== undefined) return { ok: true, value: new Date(now.getTime() - back) };
  const moment = parseMoment(text, timezone, now);
  if (moment.ok) return moment;
  return {
    ok: false,
    error: `"${text}" is not a time: give an ISO 8601 time (2026-12-01T09:00, with or without an offset) or a duration back from now (P1D)`,
  };
}

/** The first slot after `after`, or null when the pattern has no more. */
export function nextSlot(cron: string, timezone: string, after: Date): Date | null {
  return cronJob(cron, timezone).nextRun(after);
}

/** The shortest gap between the next `count` runs of a pattern (what a minimum interval is checked against). */
export function shortestGapMs(cron: string, timezone: string, from: Date, count = 60): number {
  const runs = cronJob(cron, timezone).nextRuns(count, from);
  let shortest = Number.POSITIVE_INFINITY;
  for (let index = 1; index < runs.length; index++) {
    const gap = (runs[index]?.getTime() ?? 0) - (runs[index - 1]?.getTime() ?? 0);
    shortest = Math.min(shortest, gap);
  }
  return shortest;
}

/**
 * The slots of a cron task due at `now`: every slot from `due` (its recorded next run) up to now, at most
 * `limit` of the latest, oldest first. After downtime only the last may run; the others are missed. Stepping
 * forward from `due` costs one step per slot missed (usually none), not a search over `limit` slots.
 */
export function dueSlots(cron: string, timezone: string, due: Date, now: Date, limit = 100): Date[] {
  const job = cronJob(cron, timezone);
  const slots: Date[] = [];
  let next = job.nextRun(new Date(due.getTime() - 1));
  while (next && next <= now) {
    slots.push(next);
    if (slots.length > limit) slots.shift();
    next = job.nextRun(next);
  }
  return slots.length > 0 ? slots : [due];
}

/** "Mon 30 Nov 2026, 09:00 (Europe/Berlin)": a time as the person reads it. */
export function describeTime(at: Date, timezone: string): string {
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
  return `${text} (${timezone})`;
}
