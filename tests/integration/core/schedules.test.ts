import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { NotAllowedError } from '../../../src/core/contracts/errors.js';
import type { ConversationAddress, InboundMessage, Person } from '../../../src/core/contracts/events.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import type { ScheduleRecord, Store } from '../../../src/core/contracts/store.js';
import { PeopleDirectory, type PersonListing } from '../../../src/core/people/index.js';
import {
  ScheduleBook,
  type ScheduleLimits,
  ScheduleRequestError,
  Scheduler,
  syncConfigTasks,
} from '../../../src/core/schedules/index.js';
import { ApprovalPolicy } from '../../../src/core/tools/policy.js';
import { openDatabase } from '../../../src/storage/database.js';
import { inboundEvents, scheduleRuns, schedules } from '../../../src/storage/schema.js';
import { createStore } from '../../../src/storage/store.js';
import { databaseKind, openTestDatabase, type TestDatabase } from '../../helpers/database.js';

/**
 * The schedules room over a real database with a clock the test moves: when runs are queued, how often
 * (once per slot, whoever looks), what downtime does, and what limits and permissions allow.
 */

let database: TestDatabase;
let store: Store;
let clock: Date;
const now = () => clock;
const notices: Array<{ schedule: ScheduleRecord; text: string }> = [];

const ana: Person = { platform: 'slack', id: 'U0ANA', name: 'Ana', timezone: 'Europe/Berlin' };
const ben: Person = { platform: 'slack', id: 'U0BEN', name: 'Ben' };
const boss: Person = { platform: 'slack', id: 'U0BOSS', name: 'Boss' };
let thread = 0;
const newAddress = (): ConversationAddress => ({
  platform: 'slack',
  workspace: 'T1',
  channel: 'C0OPS',
  thread: `1700000000.${String(++thread).padStart(6, '0')}`,
});

const limits: ScheduleLimits = {
  defaultTimezone: 'UTC',
  graceMs: 3_600_000,
  minIntervalMs: 60_000,
  maxActivePerPerson: 3,
  maxActivePerConversation: 4,
  maxFailuresInARow: 3,
};

function newBook(overrides: Partial<ScheduleLimits> = {}, people: PersonListing[] = []) {
  return new ScheduleBook({
    store,
    policy: new ApprovalPolicy({ slack: [boss.id] }, new PeopleDirectory(people)),
    limits: { ...limits, ...overrides },
    logger: silentLogger,
    now,
    notify: async (schedule, text) => {
      notices.push({ schedule, text });
    },
  });
}

const newScheduler = (on: Store = store) =>
  new Scheduler(
    on,
    new PeopleDirectory([]),
    { checkEveryMs: 60_000, graceMs: limits.graceMs },
    silentLogger,
    () => {},
    now,
  );

async function runsQueuedFor(id: string): Promise<InboundMessage[]> {
  const rows = await database.db
    .select({ payload: inboundEvents.payload })
    .from(inboundEvents)
    .where(sql`${inboundEvents.payload} -> 'schedule' ->> 'id' = ${id}`);
  return rows.map((row) => row.payload as InboundMessage);
}

beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());
beforeEach(async () => {
  clock = new Date('2026-11-26T08:00:00Z');
  notices.length = 0;
  // Each test counts the runs of its own tasks: the earlier tests' tasks stop being due.
  await database.db.update(schedules).set({ status: 'cancelled', nextRunAt: null });
});

describe(`scheduled tasks (${databaseKind})`, () => {
  it('queues a one-time task once at its time, as its creator asking in its thread, and confirms in their zone', async () => {
    const address = newAddress();
    const { schedule, confirmation } = await newBook().create({
      creator: ana,
      address,
      prompt: 'Remind me to check the deploy',
      at: 'PT20M',
      anchor: '1700000000.000100',
      isDirect: false,
      source: 'chat',
    });
    expect(confirmation).toBe(
      `Task ${schedule.id} scheduled: next run Thu, 26 Nov 2026, 09:20 (Europe/Berlin).`,
    );
    expect(await newScheduler().fireDue()).toEqual([]);

    clock = new Date('2026-11-26T08:20:00Z');
    const lookers = [newScheduler(), newScheduler(), newScheduler()];
    const queued = (await Promise.all(lookers.map((looker) => looker.fireDue()))).flat();
    expect(queued).toHaveLength(1);
    const [run] = await runsQueuedFor(schedule.id);
    expect(run).toMatchObject({
      kind: 'message',
      address,
      text: 'Remind me to check the deploy',
      user: { id: 'U0ANA', name: 'Ana', timezone: 'Europe/Berlin' },
      isDirect: false,
      schedule: { id: schedule.id, slot: '2026-11-26T08:20:00.000Z', anchor: '1700000000.000100' },
    });
    const [event] = await database.db
      .select()
      .from(inboundEvents)
      .where(eq(inboundEvents.id, queued[0] ?? 0));
    expect(event?.conversationKey).toBe(encodeConversationKey(address));

    clock = new Date('2026-11-26T09:00:00Z');
    expect(await newScheduler().fireDue()).toEqual([]);
    expect(await store.schedules.get(schedule.id)).toMatchObject({
      status: 'done',
      nextRunAt: null,
      lastOutcome: 'queued',
    });
  });

  it('queues each cron slot once, even when a task is found due again for a slot it already ran', async () => {
    const { schedule } = await newBook().create({
      creator: ana,
      address: newAddress(),
      prompt: 'Post the error rate',
      cron: '*/5 * * * *',
      timezone: 'UTC',
      isDirect: false,
      source: 'chat',
    });
    expect(schedule.nextRunAt).toEqual(new Date('2026-11-26T08:05:00Z'));
    clock = new Date('2026-11-26T08:05:01Z');
    expect(await newScheduler().fireDue()).toHaveLength(1);
    expect(await newScheduler().fireDue()).toHaveLength(0);
    // As if a process had committed the run but its view of the task went back (a restored row, a race):
    // the slot's record refuses a second run.
    await database.db
      .update(schedules)
      .set({ nextRunAt: new Date('2026-11-26T08:05:00Z') })
      .where(eq(schedules.id, schedule.id));
    expect(await newScheduler().fireDue()).toHaveLength(0);
    expect((await store.schedules.get(schedule.id))?.nextRunAt).toEqual(new Date('2026-11-26T08:10:00Z'));

    clock = new Date('2026-11-26T08:10:00Z');
    expect(await newScheduler().fireDue()).toHaveLength(1);
    const slots = (await runsQueuedFor(schedule.id)).map((run) => run.schedule?.slot);
    expect(slots).toEqual(['2026-11-26T08:05:00.000Z', '2026-11-26T08:10:00.000Z']);
  });

  it('after downtime runs a missed slot once late within the grace window, and records the older ones as missed', async () => {
    const { schedule } = await newBook().create({
      creator: ana,
      address: newAddress(),
      prompt: 'Hourly check',
      cron: '0 * * * *',
      timezone: 'UTC',
      isDirect: false,
      source: 'chat',
    });
    clock = new Date('2026-11-26T11:20:00Z');
    expect(await newScheduler().fireDue()).toHaveLength(1);
    expect((await runsQueuedFor(schedule.id)).map((run) => run.schedule?.slot)).toEqual([
      '2026-11-26T11:00:00.000Z',
    ]);
    const runs = await store.schedules.runs(schedule.id, 10);
    expect(runs.map((run) => [run.slot.toISOString(), run.outcome])).toEqual([
      ['2026-11-26T11:00:00.000Z', 'queued'],
      ['2026-11-26T10:00:00.000Z', 'skipped'],
      ['2026-11-26T09:00:00.000Z', 'skipped'],
    ]);
    expect((await store.schedules.get(schedule.id))?.nextRunAt).toEqual(new Date('2026-11-26T12:00:00Z'));
  });

  it('skips and records a run missed by more than the grace window', async () => {
    const { schedule } = await newBook().create({
      creator: ana,
      address: newAddress(),
      prompt: 'Remind me of the standup',
      at: 'PT10M',
      isDirect: false,
      source: 'chat',
    });
    clock = new Date('2026-11-26T09:10:01Z');
    expect(await newScheduler().fireDue()).toEqual([]);
    expect(await runsQueuedFor(schedule.id)).toEqual([]);
    expect(await store.schedules.get(schedule.id)).toMatchObject({ status: 'done', lastOutcome: 'skipped' });
    expect((await store.schedules.runs(schedule.id, 5)).map((run) => run.outcome)).toEqual(['skipped']);
  });

  it.skipIf(databaseKind !== 'postgres')(
    'queues a slot once when schedulers on separate connections look at the same moment',
    async () => {
      const other = await openDatabase({ url: database.url, dataDir: '', logger: silentLogger, poolSize: 5 });
      try {
        const book = newBook({ maxActivePerPerson: 50, maxActivePerConversation: 50 });
        const made: string[] = [];
        for (let index = 0; index < 20; index++)
          made.push(
            (
              await book.create({
                creator: { ...ben, id: `U0MANY${index}` },
                address: newAddress(),
                prompt: `task ${index}`,
                at: 'PT1M',
                isDirect: false,
                source: 'chat',
              })
            ).schedule.id,
          );
        clock = new Date('2026-11-26T08:01:00Z');
        const stores = [store, createStore(other.db), store, createStore(other.db)];
        const queued = (await Promise.all(stores.map((on) => newScheduler(on).fireDue()))).flat();
        expect(queued).toHaveLength(20);
        for (const id of made) expect(await runsQueuedFor(id)).toHaveLength(1);
      } finally {
        await other.close();
      }
    },
  );

  it('refuses what it cannot do, and says why', async () => {
    const book = newBook({ minIntervalMs: 5 * 60_000 });
    const base = { creator: ben, address: newAddress(), isDirect: false, source: 'chat' as const };
    const refused = (request: Partial<Parameters<ScheduleBook['create']>[0]>) =>
      book.create({ ...base, prompt: 'x', ...request }).then(
        () => 'created',
        (error: Error) => (error instanceof ScheduleRequestError ? error.message : `unexpected: ${error}`),
      );
    expect(await refused({ at: 'PT1M', cron: '0 9 * * *' })).toMatch(/exactly one of "at"/);
    expect(await refused({})).toMatch(/exactly one of "at"/);
    expect(await refused({ at: '2026-11-26T07:00:00Z' })).toMatch(/is in the past/);
    expect(await refused({ cron: '* * * * *' })).toMatch(
      /runs 60 s apart; runs must be at least 300 s apart/,
    );
    expect(await refused({ at: 'PT1M', timezone: 'Mars/Olympus' })).toMatch(/not an IANA time zone/);
    expect(await refused({ at: 'soon' })).toMatch(/is not a time/);
    expect(await refused({ prompt: '   ', at: 'PT1M' })).toMatch(/needs a prompt/);
  });

  it('limits active tasks per person and per conversation; a cancelled one frees its place', async () => {
    const book = newBook({ maxActivePerPerson: 2, maxActivePerConversation: 3 });
    const carol: Person = { platform: 'slack', id: 'U0CAROL' };
    const address = newAddress();
    const make = (creator: Person) =>
      book.create({ creator, address, prompt: 'p', at: 'PT1H', isDirect: false, source: 'chat' });
    const first = await make(carol);
    await make(carol);
    await expect(make(carol)).rejects.toThrow(/already has 2 active tasks/);
    await book.cancel(first.schedule.id, { person: carol });
    await make(carol);
    await make({ platform: 'slack', id: 'U0DAN' });
    await expect(make({ platform: 'slack', id: 'U0EVE' })).rejects.toThrow(
      /this conversation already has 3 active tasks/,
    );
    // The same id on another platform is another person.
    expect(
      (await book.list({ person: { ...carol, platform: 'feishu' } }, encodeConversationKey(address))).length,
    ).toBe(0);
  });

  it("counts a person's tasks through all their identities, and lets any of them see and change those", async () => {
    const book = newBook({ maxActivePerPerson: 2 }, [{ name: 'ana', slack: ana.id, api: 'ana-key' }]);
    const anaKey: Person = { platform: 'api', id: 'ana-key' };
    const keyConversation = {
      platform: 'api' as const,
      workspace: 'ana-key',
      channel: 'reminders',
      thread: 'main',
    };
    const make = (creator: Person, address: ConversationAddress) =>
      book.create({ creator, address, prompt: 'p', at: 'PT1H', isDirect: false, source: 'chat' });
    const byKey = await make(anaKey, keyConversation);
    const onSlack = await make(ana, newAddress());
    await expect(make(anaKey, keyConversation)).rejects.toThrow(/already has 2 active tasks/);
    const ids = (tasks: readonly ScheduleRecord[]) => tasks.map((task) => task.id).sort();
    expect(ids(await book.list({ person: ana }))).toEqual(ids([byKey.schedule, onSlack.schedule]));
    expect(ids(await book.list({ person: anaKey }))).toEqual(ids([byKey.schedule, onSlack.schedule]));
    expect(book.isCreator(byKey.schedule, ana)).toBe(true);
    await expect(book.cancel(byKey.schedule.id, { person: ben })).rejects.toBeInstanceOf(NotAllowedError);
    expect(await book.cancel(byKey.schedule.id, { person: ana })).toMatchObject({ status: 'cancelled' });
    expect(await book.pause(onSlack.schedule.id, { person: anaKey })).toMatchObject({ status: 'paused' });
  });

  it('lets the creator or an approver cancel, pause and resume; nobody else', async () => {
    const book = newBook();
    const address = newAddress();
    const { schedule } = await book.create({
      creator: ana,
      address,
      prompt: 'Daily digest',
      cron: '0 9 * * *',
      isDirect: false,
      source: 'chat',
    });
    await expect(book.cancel(schedule.id, { person: ben })).rejects.toBeInstanceOf(NotAllowedError);
    expect(await book.list({ person: ben }, encodeConversationKey(address))).toEqual([]);
    expect(
      (await book.list({ person: boss }, encodeConversationKey(address))).map((task) => task.id),
    ).toEqual([schedule.id]);
    const paused = await book.pause(schedule.id, { person: boss });
    expect(paused).toMatchObject({ status: 'paused', statusNote: 'paused by Boss', nextRunAt: null });
    clock = new Date('2026-11-28T12:00:00Z');
    const resumed = await book.resume(schedule.id, { person: ana });
    // Resumed at its next slot after now, not catching up on what it missed while paused.
    expect(resumed).toMatchObject({ status: 'active', nextRunAt: new Date('2026-11-29T08:00:00Z') });
    const cancelled = await book.cancel(schedule.id, { admin: true, name: 'console' });
    expect(cancelled).toMatchObject({ status: 'cancelled', statusNote: 'cancelled by console' });
    await expect(book.cancel(schedule.id, { person: ana })).rejects.toThrow(
      /is cancelled; it cannot be cancelled/,
    );
  });

  it('pauses a task whose runs failed three times in a row, once, and tells its creator; a good run resets the count', async () => {
    const book = newBook();
    const { schedule } = await book.create({
      creator: ana,
      address: newAddress(),
      prompt: 'Check the error rate',
      cron: '*/10 * * * *',
      isDirect: false,
      source: 'chat',
    });
    const run = (minute: number) => ({ id: schedule.id, slot: `2026-11-26T08:${minute}:00.000Z` });
    const fire = async (minute: number) => {
      clock = new Date(`2026-11-26T08:${minute}:00Z`);
      await newScheduler().fireDue();
    };
    await fire(10);
    await book.runEnded(run(10), 'failed');
    await fire(20);
    await book.runEnded(run(20), 'failed');
    await fire(30);
    await book.runEnded(run(30), 'replied');
    expect((await store.schedules.get(schedule.id))?.failures).toBe(0);
    for (const minute of [40, 50]) {
      await fire(minute);
      await book.runEnded(run(minute), 'failed');
    }
    // The same ending heard twice (a retried delivery) counts once.
    await book.runEnded(run(50), 'failed');
    expect(notices).toEqual([]);
    clock = new Date('2026-11-26T09:00:00Z');
    await newScheduler().fireDue();
    await book.runEnded({ id: schedule.id, slot: '2026-11-26T09:00:00.000Z' }, 'failed');
    expect(await store.schedules.get(schedule.id)).toMatchObject({
      status: 'paused',
      failures: 3,
      statusNote: 'paused after 3 failed runs in a row',
      nextRunAt: null,
    });
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toMatch(
      /^Ana, your scheduled task "Check the error rate" failed 3 times in a row, so I paused it/,
    );
  });

  it("makes the config file's tasks exist, keeps an unchanged one's next run, and cancels removed ones", async () => {
    const task = {
      name: 'ops-digest',
      conversation: { platform: 'slack' as const, workspace: 'T1', channel: 'C0OPS' },
      prompt: "Post yesterday's open approvals",
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
    };
    await syncConfigTasks(store, [task], 'UTC', silentLogger, new Date('2026-11-26T07:00:00Z'));
    const [made] = await store.schedules.list({ conversationKey: 'slack:T1:C0OPS:main' });
    expect(made).toMatchObject({
      name: 'ops-digest',
      source: 'config',
      creator: { platform: 'slack', id: 'schedule:ops-digest', name: 'scheduled task ops-digest' },
      nextRunAt: new Date('2026-11-26T08:00:00Z'),
    });
    // A restart a day later with the same entry: the slot it has not run yet stays its next run.
    await syncConfigTasks(
      store,
      [{ ...task, prompt: 'Post the open approvals' }],
      'UTC',
      silentLogger,
      new Date('2026-11-27T10:00:00Z'),
    );
    expect(await store.schedules.get(made?.id ?? '')).toMatchObject({
      prompt: 'Post the open approvals',
      nextRunAt: new Date('2026-11-26T08:00:00Z'),
    });
    await syncConfigTasks(store, [], 'UTC', silentLogger, clock);
    expect(await store.schedules.get(made?.id ?? '')).toMatchObject({
      status: 'cancelled',
      statusNote: 'removed from the config file',
    });
  });

  it('prunes the records of runs past retention, oldest first, in batches', async () => {
    const count = async () =>
      (await database.db.select({ n: sql<number>`count(*)::int` }).from(scheduleRuns))[0]?.n ?? 0;
    const { schedule } = await newBook().create({
      creator: ana,
      address: newAddress(),
      prompt: 'Every ten minutes',
      cron: '*/10 * * * *',
      isDirect: false,
      source: 'chat',
    });
    for (const minute of [10, 20, 30]) {
      clock = new Date(`2026-11-26T08:${minute}:00Z`);
      await newScheduler().fireDue();
    }
    expect(await store.schedules.runs(schedule.id, 10)).toHaveLength(3);
    const before = await count();
    expect(await store.schedules.pruneRuns(new Date('2020-01-01T00:00:00Z'), 100)).toBe(0);
    expect(await store.schedules.pruneRuns(new Date(Date.now() + 60_000), 2)).toBe(2);
    expect(await count()).toBe(before - 2);
  });
});
