import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { silentLogger } from '../src/core/contracts/logger.js';
import type { Store } from '../src/core/contracts/store.js';
import { PeopleDirectory } from '../src/core/people/index.js';
import { Scheduler } from '../src/core/schedules/index.js';
import { type OpenDatabase, openDatabase } from '../src/storage/database.js';
import { inboundEvents, schedules } from '../src/storage/schema.js';
import { createStore } from '../src/storage/store.js';
import type { Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { withBenchDatabase } from './lib/database.js';
import { bullets, table } from './lib/markdown.js';
import { median, milliseconds } from './lib/stats.js';

/**
 * Scheduled tasks: what looking for due tasks costs every process while nothing is due (it runs every
 * `schedules.checkEvery`), and how fast a burst of due runs reaches the inbox, by one process and by two
 * at once (which must still queue each run once).
 */

const day = 86_400_000;

async function seed(store: Store, count: number): Promise<void> {
  const now = Date.now();
  for (let index = 0; index < count; index++)
    await store.schedules.create({
      conversationKey: `console:local:bench:t${index % 200}`,
      source: 'chat',
      creator: { platform: 'console', id: `u${index % 500}` },
      prompt: `task ${index}`,
      cron: '0 9 * * *',
      runAt: null,
      timezone: 'UTC',
      anchor: null,
      isDirect: false,
      nextRunAt: new Date(now + day + (index % 1000) * 1000),
    });
}

/** Makes `count` of the tasks due a second ago. */
async function makeDue(database: OpenDatabase, count: number): Promise<void> {
  await database.db.execute(
    sql`update ${schedules} set next_run_at = now() - interval '1 second'
        where id in (select id from ${schedules} where status = 'active' order by id limit ${count})`,
  );
}

async function queuedRuns(database: OpenDatabase): Promise<number> {
  const [row] = await database.db
    .select({ count: sql<number>`count(*)::int` })
    .from(inboundEvents)
    .where(sql`${inboundEvents.payload} -> 'schedule' is not null`);
  return row?.count ?? 0;
}

const scheduler = (store: Store) =>
  new Scheduler(
    store,
    new PeopleDirectory([]),
    { checkEveryMs: 60_000, graceMs: 3_600_000 },
    silentLogger,
    () => {},
  );

interface Measured {
  idleMs: number;
  burstMs: number;
  twoLookers?: { ms: number; queued: number };
}

async function measure(database: OpenDatabase, other: OpenDatabase | undefined, context: BenchmarkContext) {
  const tasks = context.quick ? 1_000 : 10_000;
  const burst = context.quick ? 200 : 1_000;
  const store = createStore(database.db);
  await seed(store, tasks);
  const idle: number[] = [];
  for (let run = 0; run < (context.quick ? 10 : 50); run++) {
    const started = performance.now();
    await scheduler(store).fireDue();
    idle.push(performance.now() - started);
  }
  await makeDue(database, burst);
  const started = performance.now();
  const queued = await scheduler(store).fireDue();
  const measured: Measured = { idleMs: median(idle), burstMs: performance.now() - started };
  if (queued.length !== burst) throw new Error(`queued ${queued.length} of ${burst}`);
  if (other) {
    await makeDue(database, burst);
    const before = await queuedRuns(database);
    const twoStarted = performance.now();
    await Promise.all([scheduler(store).fireDue(), scheduler(createStore(other.db)).fireDue()]);
    measured.twoLookers = {
      ms: performance.now() - twoStarted,
      queued: (await queuedRuns(database)) - before,
    };
  }
  return { tasks, burst, measured };
}

async function run(context: BenchmarkContext) {
  context.log('schedules: PGlite');
  const directory = mkdtempSync(join(tmpdir(), 'butler-bench-schedules-'));
  const pglite = await openDatabase({ url: undefined, dataDir: directory, logger: silentLogger });
  const embedded = await measure(pglite, undefined, context).finally(async () => {
    await pglite.close();
    rmSync(directory, { recursive: true, force: true });
  });
  context.log('schedules: Postgres');
  const server = await withBenchDatabase(async (url) => {
    const first = await openDatabase({ url, dataDir: '', logger: silentLogger, poolSize: 5 });
    const second = await openDatabase({ url, dataDir: '', logger: silentLogger, poolSize: 5 });
    try {
      return await measure(first, second, context);
    } finally {
      await first.close();
      await second.close();
    }
  });
  const row = (name: string, result: typeof embedded) => [
    name,
    result.tasks.toLocaleString('en-US'),
    milliseconds(result.measured.idleMs),
    `${milliseconds(result.measured.burstMs)} ms (${milliseconds(result.measured.burstMs / result.burst)} ms a run)`,
    result.measured.twoLookers
      ? `${result.measured.twoLookers.queued.toLocaleString('en-US')} queued in ${milliseconds(result.measured.twoLookers.ms)} ms`
      : 'one process only',
  ];
  const markdown = [
    table(
      [
        'database',
        'active tasks',
        'a look with nothing due, ms (median)',
        `${embedded.burst.toLocaleString('en-US')} due runs into the inbox, one process`,
        `${server.burst.toLocaleString('en-US')} due runs, two processes at once`,
      ],
      [row('PGlite', embedded), row('PostgreSQL', server)],
    ),
    '',
    bullets([
      'Every process looks once per `schedules.checkEvery` (5 s): the first column is what an idle Butler pays for scheduled work, whatever the number of tasks (a partial index on the next run of active tasks).',
      'Queuing a run is one transaction per batch of 50: the slot recorded, the inbox event inserted, the task moved on. Two processes lock different tasks (`FOR UPDATE SKIP LOCKED`), and each run is queued once: the last column counts them.',
    ]),
  ].join('\n');
  return { markdown };
}

export const schedulesBenchmark: Benchmark = {
  name: 'schedules',
  title: '12. Scheduled tasks: looking for due work, and bursts of due runs',
  run,
};
