import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { auditLog } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * Scheduled tasks in a running Butler, in real time with short intervals: asked for in words, run as a turn
 * in the right place with the creator as requester, through the same approvals as any turn.
 */

let model: FakeModelServer;
let tools: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

const ana = { id: 'ana', name: 'Ana', timezone: 'Europe/Berlin' };
const olga = { id: 'olga', name: 'Olga' };

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `t${thread}` };
}

const ask = (address: ConversationAddress, text: string, messageId = `m${thread}`) =>
  app.butler.service.accept(inboundMessage({ text, address, messageId, isDirect: false, user: ana }));

const call = (name: string, args: Record<string, unknown>, id = `call_${name}`) => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/** The model requests whose last user message is `text` (a run's prompt). */
const requestsFor = (text: string) =>
  model.requests.filter((request) => {
    const users = request.messages.filter((message) => message.role === 'user');
    return String(users.at(-1)?.content ?? '').includes(text);
  });

beforeAll(async () => {
  model = await startFakeModelServer();
  tools = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['olga'] },
      schedules: { checkEvery: '100ms' },
      tools: [
        {
          name: 'deploy',
          description: 'Deploy a service.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${tools.url}/deploy` },
        },
      ],
    },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await tools.close();
});
beforeEach(() => {
  model.reset();
  tools.requests.length = 0;
});

describe(`scheduled runs in a running Butler (${databaseKind})`, () => {
  it('"remind me in 2 seconds": confirms in the person\'s zone, then runs once in the same thread, as them', async () => {
    const address = newAddress();
    model.enqueue(
      call('schedule_task', { prompt: 'Remind me to check the deploy', at: 'PT2S' }),
      (request) => ({ text: `Sure. ${String(request.messages.at(-1)?.content)}` }),
      { text: 'Time to check the deploy, Ana.' },
    );
    await ask(address, 'remind me in 2 seconds to check the deploy');
    await waitFor(() => platform.finalTexts().some((text) => text.startsWith('Sure.')), 10_000);
    const confirmation = platform.finalTexts().find((text) => text.startsWith('Sure.')) ?? '';
    expect(confirmation).toMatch(/^Sure\. Task [0-9a-f-]{36} scheduled: next run .*\(Europe\/Berlin\)\.$/);
    const [task] = await app.butler.schedules.list({ admin: true, name: 'test' });
    expect(task).toMatchObject({ creator: { platform: 'console', id: 'ana' }, anchor: `m${thread}` });

    await waitFor(() => platform.finalTexts().includes('Time to check the deploy, Ana.'), 10_000);
    const run = platform.replies.find((reply) => reply.finalText === 'Time to check the deploy, Ana.');
    expect(run?.target).toMatchObject({ address, replyTo: `m${thread}`, userId: 'ana' });
    const [runRequest] = requestsFor('Remind me to check the deploy');
    expect(String(runRequest?.messages[0]?.content)).toMatch(/a run of a task the person scheduled earlier/);
    expect(String(runRequest?.messages[0]?.content)).toMatch(/The person's time zone is Europe\/Berlin/);
    // The prompt is marked as the task's, for the model and wherever the conversation is shown.
    expect(String(runRequest?.messages.at(-1)?.content)).toMatch(
      /^scheduled task, set up by [^:]+: Remind me to check the deploy$/,
    );
    await app.settle();
    // Nothing runs twice, however often the scheduler looks.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(platform.finalTexts().filter((text) => text === 'Time to check the deploy, Ana.')).toHaveLength(1);
    expect(await app.butler.schedules.get(task?.id ?? '')).toMatchObject({
      status: 'done',
      lastOutcome: 'replied',
    });
  });

  it("a risky call in a run waits for a card like any other, with the creator as requester, and is audited as the schedule's", async () => {
    const address = newAddress();
    const { schedule } = await app.butler.schedules.create({
      creator: { ...ana, platform: 'console' },
      address,
      prompt: 'Deploy the api',
      at: 'PT1S',
      isDirect: false,
      source: 'chat',
    });
    model.enqueue(call('deploy', { service: 'api' }, 'call_scheduled_deploy'));
    await waitFor(() => platform.cards.some((card) => card.target.address.thread === address.thread), 10_000);
    const card = platform.lastCard();
    expect(card.card.requesters).toEqual([{ id: 'ana', name: 'Ana', timezone: 'Europe/Berlin' }]);
    expect(tools.requests).toHaveLength(0);
    // The creator may not approve their own high-risk call, scheduled or not.
    const own = await app.butler.service.decide({
      approvalId: card.card.calls[0]?.approvalId ?? '',
      platform: 'console',
      user: ana,
      decision: 'approve',
    });
    expect(own.ok).toBe(false);
    model.enqueue({ text: 'Deployed the api.' });
    await app.butler.service.decide({
      approvalId: card.card.calls[0]?.approvalId ?? '',
      platform: 'console',
      user: olga,
      decision: 'approve',
    });
    await app.settle();
    expect(tools.requests).toHaveLength(1);
    expect(platform.finalTexts().at(-1)).toBe('Deployed the api.');
    const audited = await app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.toolCallId, 'call_scheduled_deploy'));
    expect(audited).toMatchObject([
      { toolName: 'deploy', decision: 'approved', actor: 'ana', scheduleId: schedule.id, decidedBy: 'olga' },
    ]);
    expect((await app.butler.schedules.get(schedule.id))?.lastOutcome).toBe('parked');
  });

  it('a digest run lists the requests still waiting in its channel\'s threads ("post yesterday\'s open approvals here")', async () => {
    const asked = newAddress();
    model.enqueue(call('deploy', { service: 'billing' }, 'call_waiting_deploy'));
    await ask(asked, 'deploy billing');
    await waitFor(() => platform.cards.some((card) => card.target.address.thread === asked.thread), 10_000);
    const digest = newAddress();
    model.enqueue(call('list_approvals', { scope: 'channel', since: 'P1D' }), (request) => ({
      text: String(request.messages.at(-1)?.content),
    }));
    await app.butler.schedules.create({
      creator: { ...olga, platform: 'console' },
      address: digest,
      prompt: "Post yesterday's open approvals here",
      at: 'PT1S',
      isDirect: false,
      source: 'chat',
    });
    const posted = await waitFor(
      () => platform.replies.find((reply) => reply.target.address.thread === digest.thread)?.finalText,
      10_000,
    );
    expect(posted).toMatch(/^Pending approval requests in this conversation's channel since /);
    expect(posted).toMatch(
      new RegExp(
        `deploy \\(high risk\\) "Deploy a service \\(service=billing\\)": waiting, .*asked for Ana .* in console channel ops, thread ${asked.thread}`,
      ),
    );
    await app.butler.service.decide({
      approvalId: platform.lastCard().card.calls[0]?.approvalId ?? '',
      platform: 'console',
      user: olga,
      decision: 'reject',
    });
    await app.settle();
  });

  it('cancels a task from chat before it runs; nobody else may', async () => {
    const address = newAddress();
    const { schedule } = await app.butler.schedules.create({
      creator: { ...ana, platform: 'console' },
      address,
      prompt: 'Post the weekly numbers',
      cron: '0 9 * * 1',
      isDirect: false,
      source: 'chat',
    });
    model.enqueue(call('cancel_task', { id: schedule.id }), (request) => ({
      text: String(request.messages.at(-1)?.content),
    }));
    await app.butler.service.accept(
      inboundMessage({ text: 'cancel it', address, isDirect: false, user: { id: 'eve', name: 'Eve' } }),
    );
    await app.settle();
    expect(platform.finalTexts().at(-1)).toMatch(
      /Only the person who made this task, or an approver of its conversation, may change it/,
    );
    expect((await app.butler.schedules.get(schedule.id))?.status).toBe('active');

    model.enqueue(call('cancel_task', { id: schedule.id }), (request) => ({
      text: String(request.messages.at(-1)?.content),
    }));
    await ask(address, 'cancel the weekly numbers');
    await app.settle();
    expect(platform.finalTexts().at(-1)).toBe(`Cancelled task ${schedule.id} ("Post the weekly numbers").`);
    expect((await app.butler.schedules.get(schedule.id))?.status).toBe('cancelled');
  });

  it("lets an approver cancel someone's task without quoting its prompt, and no approver of another platform", async () => {
    const address = newAddress();
    const make = (creator: { id: string; name: string; platform: 'console' | 'api' }, where = address) =>
      app.butler.schedules.create({
        creator,
        address: where,
        prompt: 'Private: rotate the payroll keys',
        cron: '0 9 * * 1',
        isDirect: false,
        source: 'chat',
      });
    const { schedule } = await make({ ...ana, platform: 'console' });
    model.enqueue(call('cancel_task', { id: schedule.id }), (request) => ({
      text: String(request.messages.at(-1)?.content),
    }));
    await app.butler.service.accept(
      inboundMessage({ text: 'cancel it', address, isDirect: false, user: olga }),
    );
    await app.settle();
    expect(platform.finalTexts().at(-1)).toBe(`Cancelled task ${schedule.id} (made by Ana).`);

    // An API key's task in its own conversation: a console approver is no one to it.
    const keyTask = await make(
      { id: 'ci-bot', name: 'ci-bot', platform: 'api' },
      { platform: 'api', workspace: 'ci-bot', channel: 'nightly', thread: 'main' },
    );
    await expect(
      app.butler.schedules.cancel(keyTask.schedule.id, { person: { ...olga, platform: 'console' } }),
    ).rejects.toThrow(/approver of its conversation/);
  });

  it('"remind me" in a direct message opens the direct chat, says so there, and runs there', async () => {
    const address = newAddress();
    model.enqueue(
      call('schedule_task', { prompt: 'Remind me to stretch', at: 'PT1S', direct: true }),
      (request) => ({ text: String(request.messages.at(-1)?.content) }),
      { text: 'Stretch, Ana.' },
    );
    await ask(address, 'remind me in a second to stretch, in a DM');
    await waitFor(() => platform.finalTexts().includes('Stretch, Ana.'), 10_000);
    expect(platform.finalTexts()).toContainEqual(
      expect.stringMatching(/scheduled in your direct chat with me/),
    );
    expect(platform.directChats.at(-1)?.note).toMatch(
      /^I'll post your scheduled task here, next at .*: "Remind me to stretch"$/,
    );
    const run = platform.replies.find((reply) => reply.finalText === 'Stretch, Ana.');
    expect(run?.target.address).toEqual({
      platform: 'console',
      workspace: 'local',
      channel: 'Dana',
      thread: 'main',
    });
    expect(run?.target.replyTo).toBeUndefined();
  });

  it('a run refuses to schedule more runs', async () => {
    const address = newAddress();
    model.enqueue(call('schedule_task', { prompt: 'again', at: 'PT1H' }), (request) => ({
      text: String(request.messages.at(-1)?.content),
    }));
    await app.butler.schedules.create({
      creator: { ...ana, platform: 'console' },
      address,
      prompt: 'Schedule yourself again',
      at: 'PT1S',
      isDirect: false,
      source: 'chat',
    });
    await waitFor(
      () => platform.finalTexts().some((text) => text.includes('cannot schedule further')),
      10_000,
    );
    await app.settle();
    expect(await app.butler.schedules.list({ person: { ...ana, platform: 'console' } }, undefined)).toEqual(
      [],
    );
  });

  it('records a run whose turn failed as a failure of its task, and tells the person in the thread', async () => {
    const address = newAddress();
    const { schedule } = await app.butler.schedules.create({
      creator: { ...ana, platform: 'console' },
      address,
      prompt: 'Summarize the incidents',
      at: 'PT1S',
      isDirect: false,
      source: 'chat',
    });
    // The model endpoint fails every try of this run (the client's retries included).
    model.enqueueFor(
      (request) =>
        request.messages.some((message) => String(message.content).includes('Summarize the incidents')),
      ...Array.from({ length: 5 }, () => ({ status: 500, body: { error: { message: 'upstream down' } } })),
    );
    const deadline = Date.now() + 15_000;
    while ((await app.butler.schedules.get(schedule.id))?.lastOutcome !== 'failed' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await app.butler.schedules.get(schedule.id)).toMatchObject({ failures: 1, status: 'done' });
    // The person hears of the failure where the run would have answered.
    const told = [...platform.replies, ...platform.notices].filter(
      (entry) => entry.target.address.thread === address.thread,
    );
    expect(told.length).toBeGreaterThan(0);
  });
});
