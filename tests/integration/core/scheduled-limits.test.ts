import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress, Person } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { waitForAsync } from '../../helpers/wait-for.js';

/**
 * A scheduled run is its creator's message: it counts toward their rate limit, and runs only while they may
 * still talk to Butler where it runs (issue 34, findings 5 and 6).
 */

let model: FakeModelServer;
let app: TestButler;
let thread = 0;

const admin = { admin: true as const, name: 'test' };
const ana: Person = { platform: 'console', id: 'ana', name: 'Ana' };
const eve: Person = { platform: 'console', id: 'eve', name: 'Eve' };

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `limits-${thread}` };
}

const inASecond = (creator: Person, prompt: string) =>
  app.butler.schedules.create({
    creator,
    address: newAddress(),
    prompt,
    at: 'PT1S',
    isDirect: false,
    source: 'chat',
  });

const requestsFor = (text: string) =>
  model.requests.filter((request) => JSON.stringify(request.messages).includes(text));

beforeAll(async () => {
  model = await startFakeModelServer();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      // Eve made her task while she could talk to Butler; she no longer can.
      access: { console: { users: ['ana'] } },
      rateLimit: { messagesPerMinute: 2 },
      schedules: { checkEvery: '100ms', minInterval: '1s' },
    },
    adapters: [new RecordingAdapter()],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
});
beforeEach(() => {
  model.reset();
  model.setFallback({ text: 'Done.' });
});

describe(`scheduled runs within their creator's limits (${databaseKind})`, () => {
  it("counts runs toward their creator's rate limit: five one-off tasks due at once run two turns", async () => {
    for (const index of [1, 2, 3, 4, 5]) await inASecond(ana, `burst task ${index}`);
    await waitForAsync(async () => {
      const tasks = await app.butler.schedules.list(admin);
      return tasks.filter((task) => task.creator.id === 'ana').every((task) => task.status !== 'active');
    }, 15_000);
    await app.settle();
    expect(requestsFor('burst task')).toHaveLength(2);
  });

  it('pauses the task of someone no longer in the allowlist, and runs nothing for it', async () => {
    const { schedule } = await app.butler.schedules.create({
      creator: eve,
      address: newAddress(),
      prompt: 'eve task',
      cron: '0 9 * * *',
      timezone: 'UTC',
      isDirect: false,
      source: 'chat',
    });
    // Due now, rather than at nine.
    await app.butler.store.schedules.setStatus(
      schedule.id,
      { status: 'active', note: null, nextRunAt: new Date() },
      ['active'],
    );
    const paused = await waitForAsync(async () => {
      const task = await app.butler.schedules.get(schedule.id);
      return task?.status === 'paused' ? task : undefined;
    }, 15_000);
    expect(paused.statusNote).toMatch(/no longer allowed/);
    await app.settle();
    expect(requestsFor('eve task')).toEqual([]);
  });
});
