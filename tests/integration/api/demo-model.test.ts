import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { readEvents, types } from '../../helpers/sse-client.js';

/**
 * `BUTLER_MODEL=demo` with no endpoint, over the API as the README's "Try it" does it: Butler serves its
 * scripted demo model itself and reaches it through the `openai` SDK like any model. A labelled reply streams,
 * a file is read back, "restart" asks for the demo's high-risk tool, and the approver's key approves it; a
 * reminder is scheduled and answered when due, a file is sent back, and an agent is asked.
 */

const keys = { ana: 'ana-key-0123456789abcdef', olga: 'olga-key-0123456789abcdef' };
let app: TestButler;

beforeAll(async () => {
  app = await startTestButler({
    env: { BUTLER_MODEL: 'demo', KEY_ANA: keys.ana, KEY_OLGA: keys.olga },
    config: {
      approvers: { api: ['olga'] },
      schedules: { checkEvery: '100ms' },
      agents: [
        {
          name: 'ops',
          description: 'Looks after production services.',
          instructions: 'You look after production services.',
        },
      ],
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ana', key: '${KEY_ANA}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'olga', key: '${KEY_OLGA}', scopes: ['chat', 'approve', 'read'] },
        ],
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

const call = (path: string, body: unknown, key = keys.ana) =>
  fetch(`${app.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('the demo model', () => {
  it('is on only with BUTLER_MODEL=demo and no endpoint, and says so', () => {
    expect(app.butler.demo).toEqual({ approver: true });
    expect(app.butler.toolNames()).toEqual(
      expect.arrayContaining(['demo_lookup', 'demo_restart (high risk)']),
    );
    expect(app.butler.config.model?.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('streams a labelled reply that reads back the message and its file', async () => {
    const events = await readEvents(
      await call('/conversations/demo-1/messages', {
        text: 'hello there',
        files: [
          {
            name: 'notes.txt',
            mimeType: 'text/plain',
            data: Buffer.from('the deploy is at 14:02').toString('base64'),
          },
        ],
      }),
    );
    expect(types(events).filter((type) => type === 'delta').length).toBeGreaterThan(3);
    expect(types(events).at(-1)).toBe('done');
    const reply = String(events.at(-2)?.data.content);
    expect(reply.split('\n')[0]).toContain('Demo model: scripted replies, not an LLM');
    expect(reply).toContain('You wrote: “hello there”');
    expect(reply).toContain('notes.txt (the deploy is at 14:02)');
  });

  it('asks for demo_restart, which waits for an approver, and answers once approved', async () => {
    const events = await readEvents(
      await call('/conversations/demo-2/messages', { text: 'restart payments-api' }),
    );
    const request = events.at(-1)?.data;
    expect(request).toMatchObject({ type: 'confirm_required', tool: 'demo_restart', risk: 'high' });
    const decided = await call(
      `/approvals/${String(request?.approvalId)}/decision`,
      { decision: 'approve' },
      keys.olga,
    );
    expect(decided.status).toBe(200);
    await app.settle();
    const after = await fetch(`${app.url}/api/v1/conversations/demo-2/events?after=${events.at(-1)?.id}`, {
      headers: { authorization: `Bearer ${keys.ana}` },
      signal: AbortSignal.timeout(5_000),
    });
    const all = await readEvents(after, (event) => event.data.type === 'done');
    expect(JSON.stringify(all.at(-2)?.data)).toContain('payments-api restarted (demo: nothing was touched)');
  });

  /** What Butler streamed for one message, to its end. */
  const ask = async (conversation: string, text: string) =>
    readEvents(await call(`/conversations/${conversation}/messages`, { text }));

  it('sets a reminder with schedule_task, and answers it when it falls due', async () => {
    const events = await ask('demo-3', 'remind me in 1 minute to check the deploy');
    expect(events.find((event) => event.data.type === 'tool_call')?.data).toMatchObject({
      name: 'schedule_task',
      args: { prompt: 'Remind me to check the deploy', at: 'PT1M' },
    });
    const [task] = (await app.butler.schedules.list({ admin: true, name: 'test' })).filter(
      (each) => each.prompt === 'Remind me to check the deploy',
    );
    if (!task) throw new Error('no task was made');
    // Due now rather than in a minute.
    await app.butler.store.schedules.setStatus(
      task.id,
      { status: 'active', note: null, nextRunAt: new Date() },
      ['active'],
    );
    const after = await fetch(`${app.url}/api/v1/conversations/demo-3/events?after=${events.at(-1)?.id}`, {
      headers: { authorization: `Bearer ${keys.ana}` },
      signal: AbortSignal.timeout(10_000),
    });
    const run = await readEvents(after, (event) => event.data.type === 'done');
    expect(JSON.stringify(run)).toContain('⏰ Reminder: check the deploy');
  });

  it('sends a file back with attach_file, and asks an agent with delegate', async () => {
    const sent = await ask('demo-4', 'send me a file');
    expect(sent.find((event) => event.data.type === 'file')?.data).toMatchObject({
      name: 'demo-services.csv',
      mimeType: 'text/csv',
    });
    // The ops agent (the demo model too) was given the task, and Butler was given its answer.
    const asked = await ask('demo-5', 'ask ops to check payments-api');
    expect(types(asked).at(-1)).toBe('done');
    const answer = String(asked.findLast((event) => event.data.type === 'message')?.data.content);
    expect(answer).toContain('_Asking ops…_');
    expect(answer).toContain('delegate answered:');
    expect(answer).toContain('You wrote: “check payments-api”');
  });
});
