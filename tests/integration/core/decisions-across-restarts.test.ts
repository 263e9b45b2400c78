import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { auditLog, inboundEvents } from '../../../src/storage/schema.js';
import type { TestButler, TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { butlersOnOneDatabase } from '../../helpers/one-database.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * Decisions after the world changed: an approver removed from the config (and Butler restarted) decides
 * nothing and their standing approvals stop; a terminal-chat request decided over the API (the web
 * console) continues in the terminal chat, not in a process that cannot answer there.
 */

const onOneDatabase = butlersOnOneDatabase('butler-decisions-');
let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };
const pat = { id: 'pat', name: 'Pat' };
const oncallKey = 'oncall-key-0123456789abcdef';

beforeAll(async () => {
  model = await startFakeModelServer();
  toolServer = await startToolServer();
});
afterAll(async () => {
  await model.close();
  await toolServer.close();
});
beforeEach(() => {
  model.reset();
  toolServer.requests.length = 0;
  platform = new RecordingAdapter();
});

/** A Butler on the test's database; `terminal` with the terminal chat's adapter, else the service with the API. */
async function start(options: { approvers: string[]; terminal: boolean }): Promise<TestButler> {
  const settings: TestButlerOptions = {
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', ONCALL_KEY: oncallKey },
    config: {
      approvers: { console: options.approvers, api: ['oncall'] },
      tools: [
        {
          name: 'restart_service',
          description: 'Restart a service.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${toolServer.url}/restart_service` },
        },
      ],
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'oncall', key: '${ONCALL_KEY}', scopes: ['approve', 'read'] },
        ],
      },
    },
    ...(options.terminal ? { adapters: [platform] } : {}),
  };
  const app = await onOneDatabase(settings);
  return app;
}

const address: ConversationAddress = {
  platform: 'console',
  workspace: 'local',
  channel: 'ops',
  thread: 'main',
};

async function askForRestart(app: TestButler, service: string) {
  model.enqueue({
    toolCalls: [{ id: `call_${service}`, name: 'restart_service', arguments: `{"service":"${service}"}` }],
  });
  await app.butler.service.accept(inboundMessage({ text: `restart ${service}`, address, user: ana }));
  await app.settle();
  const call = platform.lastCard().card.calls[0];
  if (!call) throw new Error('no card');
  return call.approvalId;
}

describe(`decisions after a change, on ${databaseKind}`, () => {
  // Restarts: a minute, like the other restart tests, for a loaded CI machine.
  it('lets an approver removed from the config decide nothing, and ends their standing approvals', {
    timeout: 60_000,
  }, async () => {
    const before = await start({ approvers: ['olga', 'pat'], terminal: true });
    // Pat allows restarts here for the conversation; another request waits for a decision.
    const granted = await askForRestart(before, 'api');
    model.enqueue({ text: 'Restarted api.' });
    expect(
      await before.butler.service.decide({
        approvalId: granted,
        platform: 'console',
        user: pat,
        decision: 'approve_for_conversation',
      }),
    ).toMatchObject({ ok: true });
    await before.settle();
    expect(toolServer.requests).toHaveLength(1);
    model.enqueue(
      { toolCalls: [{ id: 'call_web', name: 'restart_service', arguments: '{"service":"web"}' }] },
      { text: 'Restarted web.' },
    );
    await before.butler.service.accept(inboundMessage({ text: 'restart web', address, user: ana }));
    await before.settle();
    // Pat's grant covered that one; now the admin removes Pat and restarts Butler.
    expect(toolServer.requests).toHaveLength(2);
    await before.stop();

    const after = await start({ approvers: ['olga'], terminal: true });
    const pending = await askForRestart(after, 'db');
    expect(toolServer.requests).toHaveLength(2);
    expect(
      await after.butler.service.decide({
        approvalId: pending,
        platform: 'console',
        user: pat,
        decision: 'approve',
      }),
    ).toMatchObject({ ok: false, code: 'not_authorized' });
    expect(platform.lastCard().card.approverIds).toEqual(['olga']);
    model.enqueue({ text: 'Restarted db.' });
    expect(
      await after.butler.service.decide({
        approvalId: pending,
        platform: 'console',
        user: olga,
        decision: 'approve',
      }),
    ).toMatchObject({ ok: true });
    await after.settle();
    expect(toolServer.requests).toHaveLength(3);
  });

  it('continues a terminal-chat request decided over the API in the terminal chat', {
    timeout: 60_000,
  }, async () => {
    const terminal = await start({ approvers: ['olga'], terminal: true });
    const approvalId = await askForRestart(terminal, 'api');
    await terminal.stop();

    // The service has the API and the admin console, but no terminal chat to answer in.
    const service = await start({ approvers: ['olga'], terminal: false });
    const response = await fetch(`${service.url}/api/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${oncallKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { message?: string }).message).toContain(
      'Butler continues it there, as soon as a Butler process serving console runs',
    );
    // Several polls later the continuation still waits for a process that can answer there.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [resume] = await service.butler.database.db
      .select()
      .from(inboundEvents)
      .where(eq(inboundEvents.kind, 'resume'));
    expect(resume).toMatchObject({ status: 'pending', attempts: 0 });
    expect(toolServer.requests).toHaveLength(0);
    await service.stop();

    model.enqueue({ text: 'Restarted api.' });
    const again = await start({ approvers: ['olga'], terminal: true });
    await again.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(platform.finalTexts().at(-1)).toBe('Restarted api.');
    const audit = await again.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.approvalId, approvalId));
    expect(audit).toMatchObject([{ decision: 'approved', outcome: 'succeeded', decidedBy: 'oncall' }]);
  });
});
