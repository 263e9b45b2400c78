import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ButlerEvent, EventBus } from '../../../src/core/contracts/event-bus.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type OpenDatabase, openDatabase } from '../../../src/storage/database.js';
import { createEventBus, eventChannel } from '../../../src/storage/event-bus.js';
import {
  databaseKind,
  openTestDatabase,
  type TestDatabase,
  testDatabaseUrl,
} from '../../helpers/database.js';
import { waitFor } from '../../helpers/wait-for.js';

let database: TestDatabase;
let bus: EventBus;

beforeAll(async () => {
  database = await openTestDatabase();
  bus = createEventBus(database, silentLogger);
});
afterAll(async () => {
  await bus.close();
  await database.close();
});

function turnStarted(conversationKey: string): ButlerEvent {
  return {
    type: 'turn_started',
    at: new Date().toISOString(),
    conversationKey,
    turnId: randomUUID(),
    trigger: 'message',
    platform: 'slack',
    userId: 'U1',
  };
}

/** Subscribes and keeps what arrives; `of(key)` is what arrived for one conversation. */
function collect(on: EventBus) {
  const events: ButlerEvent[] = [];
  const unsubscribe = on.subscribe((event) => events.push(event));
  const of = (conversationKey: string) => events.filter((event) => event.conversationKey === conversationKey);
  return { events, of, unsubscribe };
}

/** Waits until `count` events for the conversation arrived, and returns them. */
const arrived = (received: ReturnType<typeof collect>, conversationKey: string, count = 1) =>
  waitFor(() => received.of(conversationKey).length >= count && received.of(conversationKey));

describe(`event bus on ${databaseKind}`, () => {
  it('delivers published events to a subscriber, in order and intact', async () => {
    const received = collect(bus);
    const key = `order-${randomUUID()}`;
    const events: ButlerEvent[] = [
      turnStarted(key),
      {
        type: 'approval_requested',
        at: new Date().toISOString(),
        conversationKey: key,
        approvalId: 'A1',
        toolName: 'shell',
        risk: 'high',
      },
      {
        type: 'compaction',
        at: new Date().toISOString(),
        conversationKey: key,
        tokensBefore: 9000,
        tokensAfter: 1200,
        messagesFolded: 14,
      },
      {
        type: 'turn_finished',
        at: new Date().toISOString(),
        conversationKey: key,
        turnId: 'T1',
        status: 'parked',
      },
    ];
    for (const event of events) bus.publish(event);
    expect(await arrived(received, key, events.length)).toEqual(events);
    received.unsubscribe();
  });

  it('returns from publish before any subscriber runs', async () => {
    const received = collect(bus);
    const key = `async-${randomUUID()}`;
    bus.publish(turnStarted(key));
    expect(received.events).toEqual([]);
    await arrived(received, key);
    received.unsubscribe();
  });

  it('stops delivering to a listener once it unsubscribes', async () => {
    const kept = collect(bus);
    const dropped = collect(bus);
    const before = `before-${randomUUID()}`;
    bus.publish(turnStarted(before));
    await arrived(dropped, before);
    dropped.unsubscribe();

    const after = `after-${randomUUID()}`;
    bus.publish(turnStarted(after));
    await arrived(kept, after);
    expect(dropped.of(after)).toEqual([]);
    kept.unsubscribe();
  });

  it('keeps delivering to the other listeners when one throws', async () => {
    const unsubscribeThrowing = bus.subscribe(() => {
      throw new Error('listener broke');
    });
    const received = collect(bus);
    const key = `throwing-${randomUUID()}`;
    bus.publish(turnStarted(key));
    bus.publish(turnStarted(key));
    await arrived(received, key, 2);
    unsubscribeThrowing();
    received.unsubscribe();
  });

  it('trims an oversized compaction error and drops an event that cannot fit the channel', async () => {
    const received = collect(bus);
    const key = `large-${randomUUID()}`;
    bus.publish({
      type: 'compaction',
      at: new Date().toISOString(),
      conversationKey: key,
      tokensBefore: 9000,
      tokensAfter: 9000,
      messagesFolded: 0,
      error: 'x'.repeat(20_000),
    });
    bus.publish({
      type: 'approval_expired',
      at: new Date().toISOString(),
      conversationKey: key,
      approvalId: 'A1',
      toolName: 'y'.repeat(10_000),
      risk: 'high',
    });
    bus.publish({ ...turnStarted(key) });
    const [compaction, next] = await arrived(received, key, 2);
    expect(compaction?.type).toBe('compaction');
    expect(compaction?.type === 'compaction' && compaction.error?.length).toBeLessThanOrEqual(501);
    expect(next?.type).toBe('turn_started');
    expect(received.of(key)).toHaveLength(2);
    received.unsubscribe();
  });
});

// Several processes sharing one database only exist with Postgres (PGlite is single-process).
describe.runIf(testDatabaseUrl)('event bus across processes on postgres', () => {
  let other: OpenDatabase;
  let otherBus: EventBus;

  /** Publishes probes on `from` until `to` hears one: LISTEN connections come up asynchronously. */
  async function connected(from: EventBus, to: ReturnType<typeof collect>) {
    const key = `probe-${randomUUID()}`;
    const deadline = Date.now() + 10_000;
    while (to.of(key).length === 0) {
      if (Date.now() > deadline) throw new Error('the buses never heard each other');
      from.publish(turnStarted(key));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    // A second openDatabase on the same URL is a second pool and LISTEN connection: a second process.
    other = await openDatabase({ url: database.url, dataDir: '', logger: silentLogger, poolSize: 2 });
    otherBus = createEventBus(other, silentLogger);
  });
  afterAll(async () => {
    await otherBus.close();
    await other.close();
  });

  it('sees the events the other process publishes, and its own', async () => {
    const here = collect(bus);
    const there = collect(otherBus);
    await connected(bus, there);
    await connected(otherBus, here);

    const fromHere = `from-here-${randomUUID()}`;
    const fromThere = `from-there-${randomUUID()}`;
    bus.publish(turnStarted(fromHere));
    otherBus.publish(turnStarted(fromThere));
    for (const received of [here, there]) {
      await arrived(received, fromHere);
      await arrived(received, fromThere);
    }
    here.unsubscribe();
    there.unsubscribe();
  });

  it('sends what was already published when a publisher closes', async () => {
    const received = collect(bus);
    const third = await openDatabase({ url: database.url, dataDir: '', logger: silentLogger, poolSize: 1 });
    const closingBus = createEventBus(third, silentLogger);
    const key = `closing-${randomUUID()}`;
    closingBus.publish(turnStarted(key));
    await closingBus.close();
    closingBus.publish(turnStarted(key));
    await third.close();
    await arrived(received, key);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received.of(key)).toHaveLength(1);
    received.unsubscribe();
  });

  it('ignores notifications on the channel that are not Butler events', async () => {
    const received = collect(bus);
    const key = `malformed-${randomUUID()}`;
    const client = other.postgresClient;
    if (!client) throw new Error('expected a postgres client');
    await client.notify(eventChannel, 'not json');
    await client.notify(
      eventChannel,
      JSON.stringify({ type: 'something_else', at: 'now', conversationKey: key }),
    );
    await client.notify(eventChannel, JSON.stringify(turnStarted(key)));
    const [only] = await arrived(received, key);
    expect(only?.type).toBe('turn_started');
    expect(received.of(key)).toHaveLength(1);
    received.unsubscribe();
  });

  it('listens again after its LISTEN connection drops', async () => {
    const received = collect(bus);
    await connected(otherBus, received);
    const client = other.postgresClient;
    if (!client) throw new Error('expected a postgres client');
    const terminated = await client<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and query ilike 'listen%' and pg_terminate_backend(pid)`;
    expect(terminated.length).toBeGreaterThanOrEqual(1);
    const pids = terminated.map((row) => row.pid);
    // Probe only once the old connections are gone: a dying backend may still pass on a notification.
    const alive = async () =>
      (await client`select 1 from pg_stat_activity where pid = any(${pids}::int[])`).length > 0;
    const deadline = Date.now() + 5000;
    while (await alive()) {
      if (Date.now() > deadline) throw new Error('the LISTEN connections outlived their termination');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await connected(otherBus, received);
    received.unsubscribe();
  });
});
