import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ButlerEvent, EventBus } from '../../../src/core/contracts/event-bus.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { createEventBus } from '../../../src/storage/event-bus.js';
import { databaseKind, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * Live events where LISTEN cannot work (behind a transaction pooler without DATABASE_DIRECT_URL): written to a
 * table every process reads a few times a second. Two buses on one database stand for two processes.
 */

let database: TestDatabase;
let first: EventBus;
let second: EventBus;

beforeAll(async () => {
  database = await openTestDatabase();
  const throughTable = { ...database, events: 'table' as const };
  first = createEventBus(throughTable, silentLogger);
  second = createEventBus(throughTable, silentLogger);
});
afterAll(async () => {
  await first?.close();
  await second?.close();
  await database?.close();
});

const started = (conversationKey: string, index: number): ButlerEvent => ({
  type: 'turn_started',
  at: new Date().toISOString(),
  conversationKey,
  turnId: `turn-${index}`,
  trigger: 'message',
  platform: 'api',
  userId: 'ci-bot',
});

describe(`live events through a table on ${databaseKind}`, () => {
  it("brings every process the others' events, once each and in order, and not what came before it listened", async () => {
    const key = `table-${randomUUID()}`;
    // The publisher hears its own events too: once it heard the first, that row is in the table.
    const own: ButlerEvent[] = [];
    first.subscribe((event) => {
      if (event.conversationKey === key) own.push(event);
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    first.publish(started(key, 0));
    await waitFor(() => own.length >= 1 || undefined, 5_000);
    const heard: ButlerEvent[] = [];
    second.subscribe((event) => {
      if (event.conversationKey === key) heard.push(event);
    });
    // The subscriber starts reading from the newest row: give it a read before publishing.
    await new Promise((resolve) => setTimeout(resolve, 600));
    for (const index of [1, 2, 3]) first.publish(started(key, index));
    await waitFor(() => heard.length >= 3 || undefined, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(heard.map((event) => (event.type === 'turn_started' ? event.turnId : ''))).toEqual([
      'turn-1',
      'turn-2',
      'turn-3',
    ]);
  });
});
