import { describe, expect, it } from 'vitest';
import {
  checkCron,
  describeTime,
  dueSlots,
  isTimeZone,
  nextSlot,
  parseMoment,
  shortestGapMs,
} from '../../../src/core/schedules/timing.js';

const iso = (dates: Array<Date | null>) => dates.map((date) => date?.toISOString());

/** The next `count` runs of a pattern after `from`, one nextSlot at a time (as the scheduler steps). */
function runs(cron: string, timezone: string, from: string, count: number) {
  const found: Array<Date | null> = [];
  let after: Date | null = new Date(from);
  for (let index = 0; index < count && after; index++) {
    after = nextSlot(cron, timezone, after);
    found.push(after);
  }
  return iso(found);
}

describe('when scheduled tasks run', () => {
  it('keeps 09:00 at 09:00 local time across the spring and autumn changes in Europe/Berlin', () => {
    // CET is UTC+1, CEST UTC+2: the clocks go forward on 29 March 2026 and back on 25 October 2026.
    expect(runs('0 9 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(runs('0 9 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T08:00:00.000Z',
      '2026-10-26T08:00:00.000Z',
    ]);
  });

  it('runs a time that does not exist once, at the first moment after the gap, in Europe/Berlin', () => {
    // 02:30 on 29 March 2026 does not exist in Berlin (02:00 → 03:00).
    expect(runs('30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('runs a time that happens twice only once in America/New_York, and never twice a day', () => {
    // 01:30 happens twice on 1 November 2026 (EDT then EST).
    expect(runs('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 3)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
      '2026-11-03T06:30:00.000Z',
    ]);
    // A weekday digest at 9:00 across the March change (8 March 2026): 14:00Z in EST, then 13:00Z in EDT.
    expect(runs('0 9 * * 1-5', 'America/New_York', '2026-03-06T12:00:00Z', 3)).toEqual([
      '2026-03-06T14:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
      '2026-03-10T13:00:00.000Z',
    ]);
  });

  it('reads one-time moments: durations from now, offsets, and local times in the zone', () => {
    const now = new Date('2026-11-26T18:00:00Z');
    expect(parseMoment('PT20M', 'UTC', now)).toEqual({ ok: true, value: new Date('2026-11-26T18:20:00Z') });
    expect(parseMoment('P1DT2H', 'UTC', now)).toEqual({ ok: true, value: new Date('2026-11-27T20:00:00Z') });
    expect(parseMoment('2026-12-01T09:00:00+01:00', 'America/New_York', now)).toEqual({
      ok: true,
      value: new Date('2026-12-01T08:00:00Z'),
    });
    expect(parseMoment('2026-12-01T09:00', 'America/New_York', now)).toEqual({
      ok: true,
      value: new Date('2026-12-01T14:00:00Z'),
    });
    expect(parseMoment('2026-07-01T09:00', 'Europe/Berlin', now)).toEqual({
      ok: true,
      value: new Date('2026-07-01T07:00:00Z'),
    });
    for (const bad of ['tomorrow', 'P', 'PT', '2026-13-45T99:00', ''])
      expect(parseMoment(bad, 'UTC', now).ok, bad).toBe(false);
  });

  it('takes 5-field cron patterns only, and says what is wrong with others', () => {
    expect(checkCron(' 0  9 * * 1-5 ', 'UTC')).toEqual({ ok: true, value: '0 9 * * 1-5' });
    const six = checkCron('0 0 9 * * *', 'UTC');
    expect(six.ok).toBe(false);
    if (!six.ok) expect(six.error).toMatch(/6 fields; a cron pattern here has 5/);
    const wrong = checkCron('61 * * * *', 'UTC');
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.error).toMatch(/not a cron pattern.*minute/);
  });

  it('measures the shortest gap between runs, and lists the slots missed during downtime', () => {
    const from = new Date('2026-11-26T00:00:00Z');
    expect(shortestGapMs('* * * * *', 'UTC', from)).toBe(60_000);
    expect(shortestGapMs('0,5 9 * * *', 'UTC', from)).toBe(5 * 60_000);
    expect(shortestGapMs('0 9 * * *', 'UTC', from)).toBe(86_400_000);
    const slots = dueSlots(
      '0 * * * *',
      'UTC',
      new Date('2026-11-26T10:00:00Z'),
      new Date('2026-11-26T13:20:00Z'),
    );
    expect(iso(slots)).toEqual([
      '2026-11-26T10:00:00.000Z',
      '2026-11-26T11:00:00.000Z',
      '2026-11-26T12:00:00.000Z',
      '2026-11-26T13:00:00.000Z',
    ]);
  });

  it('names time zones it knows and shows times as the person reads them', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(describeTime(new Date('2026-11-30T08:00:00Z'), 'Europe/Berlin')).toBe(
      'Mon, 30 Nov 2026, 09:00 (Europe/Berlin)',
    );
  });
});
