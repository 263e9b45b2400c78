import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import type { ScheduleRecord } from '../../../src/core/contracts/store.js';
import { openDatabase } from '../../../src/storage/database.js';
import { createStore } from '../../../src/storage/store.js';
import {
  type ButlerChild,
  isReady,
  isStopped,
  isType,
  killButlerChildren,
  startButlerChild,
} from '../../helpers/butler-child.js';
import {
  createPostgresDatabase,
  databaseEnv,
  databaseKind,
  dropPostgresDatabase,
  testDatabaseUrl,
} from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';

/**
 * Scheduled runs across crashes and processes, with Butler in child processes that the test kills: a run is
 * queued once and answered once, whoever is alive when it is due.
 */

let model: FakeModelServer;
let directory: string;
let databaseUrl: string | undefined;
let children: ButlerChild[];

beforeAll(async () => {
  model = await startFakeModelServer();
});
afterAll(() => model.close());
beforeEach(async () => {
  model.reset();
  // A run asked for twice would reach the model a second time: it would be answered, and counted.
  model.setFallback({ text: 'An extra answer nobody asked for.' });
  directory = mkdtempSync(join(tmpdir(), 'butler-schedule-crash-'));
  databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
  children = [];
  return async () => {
    await killButlerChildren(children);
    if (databaseUrl) await dropPostgresDatabase(databaseUrl);
    rmSync(directory, { recursive: true, force: true });
  };
});

function environment() {
  const configPath = join(directory, 'butler.config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      // A lease long enough that a child stalled by a loaded machine (the embedded database runs on its
      // main thread) keeps it: a lapsed lease rightly reruns the turn, which would ask the model a third time.
      worker: { leaseSeconds: 4, pollMilliseconds: 20, sweepMilliseconds: 200 },
      schedules: { checkEvery: '100ms' },
    }),
  );
  return {
    BUTLER_BASE_URL: model.baseUrl,
    BUTLER_MODEL: 'test-model',
    BUTLER_CONFIG: configPath,
    LOG_LEVEL: 'warn',
    ...(databaseUrl ? databaseEnv(databaseUrl) : { BUTLER_DATA_DIR: join(directory, 'data') }),
  };
}

async function start(): Promise<ButlerChild> {
  const child = startButlerChild(environment());
  children.push(child);
  await child.waitFor(isReady);
  return child;
}

/**
 * Asks `child` for a reminder in `seconds`, and waits for the confirmation from any of `answering`: with several
 * processes on one database, whichever claims the message first answers it.
 */
async function scheduleReminder(
  child: ButlerChild,
  prompt: string,
  seconds: number,
  answering: readonly ButlerChild[] = [child],
): Promise<void> {
  model.enqueue(
    {
      toolCalls: [
        {
          id: 'call_schedule',
          name: 'schedule_task',
          arguments: JSON.stringify({ prompt, at: `PT${seconds}S` }),
        },
      ],
    },
    { text: 'Scheduled.' },
  );
  child.send(JSON.stringify(inboundMessage({ text: `remind me in ${seconds} seconds: ${prompt}` })));
  await Promise.any(
    answering.map((candidate) =>
      candidate.waitFor(
        (line): line is { type: 'finish'; messageId: string; text: string } =>
          isType('finish')(line) && line.text === 'Scheduled.',
      ),
    ),
  );
}

const finishesWith = (children: readonly ButlerChild[], text: string) =>
  children.flatMap((child) => child.lines.filter(isType('finish'))).filter((line) => line.text === text);

/** A run's prompt reaches the model marked as the task's: "scheduled task, set up by …: <prompt>". */
const isRunOf = (prompt: string) => (message: Record<string, unknown>) =>
  message.role === 'user' &&
  String(message.content).startsWith('scheduled task') &&
  String(message.content).endsWith(`: ${prompt}`);

const runRequests = (prompt: string) =>
  model.requests.filter((request) => request.messages.some(isRunOf(prompt)));

/** The only task in the database, read after every child stopped (an embedded database has one owner). */
async function onlyTask(): Promise<{ task: ScheduleRecord | undefined; runs: string[] }> {
  const database = await openDatabase({
    url: databaseUrl,
    dataDir: join(directory, 'data'),
    logger: silentLogger,
  });
  try {
    const store = createStore(database.db);
    const [task] = await store.schedules.list({ statuses: ['active', 'paused', 'done', 'cancelled'] });
    const runs = task ? await store.schedules.runs(task.id, 10) : [];
    return { task, runs: runs.map((run) => run.outcome) };
  } finally {
    await database.close();
  }
}

async function stopGracefully(child: ButlerChild): Promise<void> {
  child.send('stop');
  await child.waitFor(isStopped);
  await child.exited;
}

describe(`scheduled runs across crashes (${databaseKind})`, () => {
  it('runs a task that fell due while Butler was killed once, after the restart', async () => {
    const first = await start();
    await scheduleReminder(first, 'Remind me to rotate the keys', 2);
    first.child.kill('SIGKILL');
    await first.exited;
    await delay(2_500);

    model.enqueue({ text: 'Rotate the keys now.' });
    const second = await start();
    await second.waitFor(
      (line): line is { type: 'finish'; messageId: string; text: string } =>
        isType('finish')(line) && line.text === 'Rotate the keys now.',
    );
    await delay(1_000);
    expect(finishesWith([first, second], 'Rotate the keys now.')).toHaveLength(1);
    expect(runRequests('Remind me to rotate the keys')).toHaveLength(1);
    await stopGracefully(second);
    const { task, runs } = await onlyTask();
    expect(task).toMatchObject({ status: 'done', lastOutcome: 'replied', failures: 0 });
    expect(runs).toEqual(['replied']);
  }, 150_000);

  it('finishes a run killed mid-reply once, in place, after the restart', async () => {
    const first = await start();
    const words = Array.from({ length: 20 }, (_, index) => `step${index} `);
    model.enqueueFor(
      (request) => request.messages.some(isRunOf('Rotate the keys')),
      { text: words.join(''), chunks: words, chunkDelayMs: 200 },
      { text: 'The keys are rotated.' },
    );
    await scheduleReminder(first, 'Rotate the keys', 1);
    const started = await first.waitFor(
      (line): line is { type: 'append'; messageId: string; delta: string } =>
        isType('append')(line) && line.delta.startsWith('step'),
    );
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await start();
    const finished = await second.waitFor(
      (line): line is { type: 'finish'; messageId: string; text: string } =>
        isType('finish')(line) && line.text === 'The keys are rotated.',
    );
    // The interrupted reply's message is overwritten, not followed by a second one.
    expect(finished.messageId).toBe(started.messageId);
    await delay(1_000);
    expect(runRequests('Rotate the keys')).toHaveLength(2);
    expect(finishesWith([second], 'An extra answer nobody asked for.')).toHaveLength(0);
    await stopGracefully(second);
    const { task, runs } = await onlyTask();
    expect(task).toMatchObject({ status: 'done', lastOutcome: 'replied' });
    expect(runs).toEqual(['replied']);
  }, 150_000);

  it.skipIf(databaseKind !== 'postgres')(
    'runs a task once when two Butler processes share the database',
    async () => {
      const [left, right] = await Promise.all([start(), start()]);
      if (!left || !right) throw new Error('two children expected');
      model.enqueueFor(
        (request) => request.messages.some((message) => message.content === 'Remind us of the stand-up'),
        { text: 'Stand-up in five minutes.' },
      );
      await scheduleReminder(left, 'Remind us of the stand-up', 2, [left, right]);
      await delay(2_000);
      const both = [left, right];
      for (
        let waited = 0;
        finishesWith(both, 'Stand-up in five minutes.').length === 0 && waited < 10_000;
        waited += 100
      )
        await delay(100);
      await delay(1_500);
      expect(finishesWith(both, 'Stand-up in five minutes.')).toHaveLength(1);
      expect(runRequests('Remind us of the stand-up')).toHaveLength(1);
      await Promise.all(both.map(stopGracefully));
      expect((await onlyTask()).runs).toEqual(['replied']);
    },
    60_000,
  );
});
