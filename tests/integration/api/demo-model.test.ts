import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { readEvents, types } from '../../helpers/sse-client.js';

/**
 * `BUTLER_MODEL=demo` with no endpoint, over the API as the README's "Try it" does it: Butler serves its
 * scripted demo model itself and reaches it through the `openai` SDK like any model. A labelled reply streams,
 * a file is read back, "restart" asks for the demo's high-risk tool, and the approver's key approves it.
 */

const keys = { ana: 'ana-key-0123456789abcdef', olga: 'olga-key-0123456789abcdef' };
let app: TestButler;

beforeAll(async () => {
  app = await startTestButler({
    env: { BUTLER_MODEL: 'demo', KEY_ANA: keys.ana, KEY_OLGA: keys.olga },
    config: {
      approvers: { api: ['olga'] },
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
});
