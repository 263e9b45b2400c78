import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { approvalGrants, approvals, auditLog } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';

let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };
const pat = { id: 'pat', name: 'Pat' };
const eve = { id: 'eve', name: 'Eve' };

function appOptions(
  overrides: { approvalTtlMinutes?: number; standingApprovalHours?: number } = {},
): TestButlerOptions {
  const tool = (name: string, risk: string, method: string) => ({
    name,
    description: `${name.replace('_', ' ')} of a service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation is under test.
    http: { method, url: `${toolServer.url}/${name}`, headers: { authorization: 'Bearer ${OPS_TOKEN}' } },
  });
  return {
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', OPS_TOKEN: 'ops-secret' },
    config: {
      approvers: { console: ['olga', 'pat'] },
      approvalTtlMinutes: overrides.approvalTtlMinutes ?? 60,
      standingApprovalHours: overrides.standingApprovalHours ?? 8,
      tools: [
        tool('service_status', 'low', 'GET'),
        tool('scale_service', 'medium', 'POST'),
        tool('restart_service', 'high', 'POST'),
      ],
    },
    adapters: [platform],
  };
}

beforeAll(async () => {
  model = await startFakeModelServer();
  toolServer = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler(appOptions());
});
afterAll(async () => {
  await app.close();
  await model.close();
  await toolServer.close();
});
beforeEach(() => {
  model.reset();
  toolServer.requests.length = 0;
});

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `t${thread}` };
}

/** Sends `text` from `user` and waits until Butler has answered it. */
async function say(target: TestButler, address: ConversationAddress, text: string, user = ana) {
  await target.butler.service.accept(inboundMessage({ text, address, user, isDirect: false }));
  await target.settle();
}

/** Sends a message whose first model answer is the given tool calls, then text. */
async function askForTools(target: TestButler, address: ConversationAddress, calls: Array<[string, object]>) {
  model.enqueue({
    text: 'Let me do that.',
    toolCalls: calls.map(([name, args], index) => ({
      id: `call_${thread}_${index}`,
      name,
      arguments: JSON.stringify(args),
    })),
  });
  await target.butler.service.accept(inboundMessage({ text: 'please', address, user: ana, isDirect: false }));
  await target.settle();
}

const toolMessages = (requestIndex: number) =>
  (model.requests[requestIndex]?.messages ?? []).filter((message) => message.role === 'tool');

/** The one call of the last card posted. */
function lastCall(): ApprovalCardCall {
  const call = platform.lastCard().card.calls[0];
  if (!call) throw new Error('the last card has no calls');
  return call;
}

async function auditRows(target: TestButler, approvalId: string) {
  return target.butler.database.db.select().from(auditLog).where(eq(auditLog.approvalId, approvalId));
}

describe(`approvals on ${databaseKind}`, () => {
  it('runs a low-risk tool at once and gives the model its result', async () => {
    model.enqueue(
      { toolCalls: [{ id: 'call_low', name: 'service_status', arguments: '{"service":"api"}' }] },
      { text: 'api is up' },
    );
    await app.butler.service.accept(
      inboundMessage({ text: 'status of api?', address: newAddress(), user: ana }),
    );
    await app.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(toolServer.requests[0]).toMatchObject({ method: 'GET', path: '/service_status?service=api' });
    expect(toolServer.requests[0]?.headers.authorization).toBe('Bearer ops-secret');
    expect(toolMessages(1)).toEqual([{ role: 'tool', tool_call_id: 'call_low', content: '{"ok":true}' }]);
    expect(
      platform.cards.filter((card) => card.card.calls.some((call) => call.toolName === 'service_status')),
    ).toHaveLength(0);
    expect(platform.finalTexts().at(-1)).toBe('api is up');
  });

  it('lets the requester approve a medium-risk call, then streams the continuation', async () => {
    const address = newAddress();
    await askForTools(app, address, [['scale_service', { service: 'api' }]]);
    const { card } = platform.lastCard();
    expect(card.calls).toMatchObject([
      {
        toolName: 'scale_service',
        risk: 'medium',
        status: 'pending',
        whoMayApprove: 'the requester or an approver',
      },
    ]);
    expect(card.requesters).toEqual([ana]);
    expect(toolServer.requests).toHaveLength(0);

    model.enqueue({ text: 'Scaled api.' });
    const result = await app.butler.service.decide({
      approvalId: lastCall().approvalId,
      platform: 'console',
      user: ana,
      decision: 'approve',
    });
    expect(result).toMatchObject({ ok: true, card: { calls: [{ status: 'approved', decidedBy: ana }] } });
    await app.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(toolServer.requests[0]?.body).toEqual({ service: 'api' });
    expect(platform.finalTexts().at(-1)).toBe('Scaled api.');
    expect(platform.replies.at(-1)?.target.address).toEqual(address);
  });

  it('keeps high-risk calls for an approver other than the requester', async () => {
    await askForTools(app, newAddress(), [['restart_service', { service: 'db' }]]);
    const call = lastCall();
    expect(call.whoMayApprove).toBe('an approver other than the requester');

    for (const user of [ana, eve]) {
      const refused = await app.butler.service.decide({
        approvalId: call.approvalId,
        platform: 'console',
        user,
        decision: 'approve',
      });
      expect(refused).toMatchObject({ ok: false, code: 'not_authorized' });
    }
    const wrongPlatform = await app.butler.service.decide({
      approvalId: call.approvalId,
      platform: 'slack',
      user: olga,
      decision: 'approve',
    });
    expect(wrongPlatform).toMatchObject({ ok: false, code: 'not_found' });
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);
    expect((await app.butler.store.approvals.get(call.approvalId))?.status).toBe('pending');

    model.enqueue({ text: 'Restarted db.' });
    expect(
      await app.butler.service.decide({
        approvalId: call.approvalId,
        platform: 'console',
        user: olga,
        decision: 'approve',
      }),
    ).toMatchObject({ ok: true });
    await app.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(toolServer.requests[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f]{32}$/);
    const rows = await auditRows(app, call.approvalId);
    expect(rows).toMatchObject([
      {
        toolName: 'restart_service',
        risk: 'high',
        decision: 'approved',
        outcome: 'succeeded',
        actor: 'ana',
        decidedBy: 'olga',
      },
    ]);
  });

  it('takes one decision when approvers click at once, and runs the tool once', async () => {
    await askForTools(app, newAddress(), [['restart_service', { service: 'cache' }]]);
    const { approvalId } = lastCall();
    model.setFallback({ text: 'done' });
    toolServer.respond({ delayMs: 50 });
    const clicks = await Promise.all(
      [olga, pat, olga, pat, olga, pat].map((user, index) =>
        app.butler.service.decide({
          approvalId,
          platform: 'console',
          user,
          decision: index % 3 === 2 ? 'reject' : 'approve',
        }),
      ),
    );
    toolServer.respond({});
    expect(clicks.filter((click) => click.ok)).toHaveLength(1);
    expect(
      clicks.filter((click) => !click.ok).every((click) => !click.ok && click.code === 'already_decided'),
    ).toBe(true);
    await app.settle();
    const approval = await app.butler.store.approvals.get(approvalId);
    expect(toolServer.requests).toHaveLength(approval?.status === 'approved' ? 1 : 0);
    expect(await auditRows(app, approvalId)).toHaveLength(1);
  });

  it('tells the model who rejected and why, without running the tool', async () => {
    await askForTools(app, newAddress(), [['restart_service', { service: 'api' }]]);
    const { approvalId } = lastCall();
    model.enqueue({ text: 'Understood, I will not restart it.' });
    const result = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: olga,
      decision: 'reject',
      reason: 'not during business hours',
    });
    expect(result).toMatchObject({
      ok: true,
      card: { calls: [{ status: 'rejected', reason: 'not during business hours' }] },
    });
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);
    const told = toolMessages(1)[0];
    expect(told?.content).toContain('Rejected by Olga with the reason: "not during business hours"');
    expect(platform.finalTexts().at(-1)).toBe('Understood, I will not restart it.');
    expect(await auditRows(app, approvalId)).toMatchObject([
      { decision: 'rejected', outcome: 'not_run', decidedBy: 'olga' },
    ]);
  });

  it('runs the calls of a step that need no decision at once, and continues once the card is decided', async () => {
    await askForTools(app, newAddress(), [
      ['service_status', { service: 'a' }],
      ['restart_service', { service: 'b' }],
      ['service_status', { service: 'c' }],
    ]);
    expect(toolServer.requests.map((request) => request.path)).toEqual([
      '/service_status?service=a',
      '/service_status?service=c',
    ]);
    model.enqueue({ text: 'All three handled.' });
    await app.butler.service.decide({
      approvalId: lastCall().approvalId,
      platform: 'console',
      user: pat,
      decision: 'approve',
    });
    await app.settle();
    expect(toolServer.requests.map((request) => request.path)).toEqual([
      '/service_status?service=a',
      '/service_status?service=c',
      '/restart_service',
    ]);
    expect(toolMessages(1).map((message) => message.tool_call_id)).toEqual([
      `call_${thread}_0`,
      `call_${thread}_1`,
      `call_${thread}_2`,
    ]);
    expect(model.requests).toHaveLength(2);
  });

  it('re-posts a card that a platform failure kept from being shown', async () => {
    platform.failCards = 1;
    const address = newAddress();
    await askForTools(app, address, [['restart_service', { service: 'late' }]]);
    expect(platform.notices.at(-1)?.text).toContain('could not show the approval card');
    // Read from the table: by now a sweep may already have re-posted it.
    const [row] = await app.butler.database.db
      .select({ id: approvals.id })
      .from(approvals)
      .where(eq(approvals.conversationKey, encodeConversationKey(address)));
    const approvalId = row?.id;
    expect(approvalId).toBeDefined();
    await waitFor(() => platform.cards.at(-1)?.card.calls[0]?.approvalId === approvalId, 10_000);
    expect(lastCall()).toMatchObject({ approvalId, toolName: 'restart_service', status: 'pending' });
  });
});

describe(`approvals across restarts and deadlines on ${databaseKind}`, () => {
  it('expires an undecided approval, updates its card and tells the model', async () => {
    const shortLived = await startTestButler(appOptions({ approvalTtlMinutes: 0.005 }));
    try {
      await askForTools(shortLived, newAddress(), [['restart_service', { service: 'api' }]]);
      const card = platform.lastCard();
      const call = lastCall();
      model.enqueue({ text: 'The restart request expired.' });
      // The request lives 300 ms; a sweep after that expires it, however long the machine takes to get there.
      await waitFor(() => card.updates.at(-1)?.calls[0]?.status === 'expired', 10_000);
      await shortLived.settle();
      expect(toolMessages(1)[0]?.content).toContain('expired');
      expect(toolServer.requests).toHaveLength(0);
      const late = await shortLived.butler.service.decide({
        approvalId: call.approvalId,
        platform: 'console',
        user: olga,
        decision: 'approve',
      });
      expect(late).toMatchObject({ ok: false, code: 'expired' });
    } finally {
      await shortLived.close();
    }
  });

  it('resumes a parked turn after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-restart-'));
    const first = await startTestButler({ ...appOptions(), dataDir });
    const address = newAddress();
    await askForTools(first, address, [['restart_service', { service: 'api' }]]);
    const { approvalId } = lastCall();
    await first.stop();

    const second = await startTestButler({
      ...appOptions(),
      dataDir,
      ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}),
    });
    try {
      model.enqueue({ text: 'Restarted api after the restart.' });
      expect(
        await second.butler.service.decide({
          approvalId,
          platform: 'console',
          user: olga,
          decision: 'approve',
        }),
      ).toMatchObject({ ok: true });
      await second.settle();
      expect(toolServer.requests).toHaveLength(1);
      expect(platform.finalTexts().at(-1)).toBe('Restarted api after the restart.');
      expect(platform.replies.at(-1)?.target.address).toEqual(address);
    } finally {
      await second.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(`fewer approval taps on ${databaseKind}`, () => {
  const paths = () => toolServer.requests.map((request) => request.path);

  it('asks once for every call of a step that needs a decision, and Approve all runs each once', async () => {
    const cardsBefore = platform.cards.length;
    await askForTools(app, newAddress(), [
      ['restart_service', { service: 'a' }],
      ['service_status', { service: 'b' }],
      ['scale_service', { service: 'c' }],
    ]);
    expect(platform.cards).toHaveLength(cardsBefore + 1);
    const { card } = platform.lastCard();
    expect(card.calls.map((call) => [call.toolName, call.status])).toEqual([
      ['restart_service', 'pending'],
      ['scale_service', 'pending'],
    ]);
    expect(paths()).toEqual(['/service_status?service=b']);

    model.enqueue({ text: 'All done.' });
    const result = await app.butler.service.decide({
      batchId: card.batchId,
      platform: 'console',
      user: olga,
      decision: 'approve',
    });
    expect(result).toMatchObject({
      ok: true,
      card: { calls: [{ status: 'approved' }, { status: 'approved' }] },
    });
    expect(result.ok && result.message).toBeFalsy();
    const again = await app.butler.service.decide({
      batchId: card.batchId,
      platform: 'console',
      user: pat,
      decision: 'approve',
    });
    expect(again).toMatchObject({ ok: false, code: 'already_decided' });
    await app.settle();
    expect(paths()).toEqual(['/service_status?service=b', '/restart_service', '/scale_service']);
    expect(toolMessages(1).map((message) => message.tool_call_id)).toEqual([
      `call_${thread}_0`,
      `call_${thread}_1`,
      `call_${thread}_2`,
    ]);
    expect(model.requests).toHaveLength(2);
  });

  it('decides what the clicker may on Approve all, and continues when the rest is decided', async () => {
    await askForTools(app, newAddress(), [
      ['restart_service', { service: 'a' }],
      ['scale_service', { service: 'b' }],
    ]);
    const { batchId } = platform.lastCard().card;
    const partial = await app.butler.service.decide({
      batchId,
      platform: 'console',
      user: ana,
      decision: 'approve',
    });
    expect(partial).toMatchObject({
      ok: true,
      card: { calls: [{ status: 'pending' }, { status: 'approved' }] },
    });
    expect(partial.ok && partial.message).toMatch(/1 action still needs someone else/);
    await app.settle();
    expect(paths()).toEqual([]);

    model.enqueue({ text: 'Both handled.' });
    const rest = platform.lastCard().card.calls[0]?.approvalId ?? '';
    await app.butler.service.decide({
      approvalId: rest,
      platform: 'console',
      user: olga,
      decision: 'reject',
    });
    await app.settle();
    expect(paths()).toEqual(['/scale_service']);
    expect(toolMessages(1).map((message) => String(message.content))).toEqual([
      expect.stringContaining('Rejected by Olga'),
      '{"ok":true}',
    ]);
  });

  it('lets an approver allow a tool for the conversation: later calls run without a card, audited with the grant', async () => {
    const address = newAddress();
    await askForTools(app, address, [['restart_service', { service: 'api' }]]);
    const { approvalId } = lastCall();
    const refused = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: ana,
      decision: 'approve_for_conversation',
    });
    expect(refused).toMatchObject({ ok: false, code: 'not_authorized' });

    model.enqueue({ text: 'Restarted api.' });
    const granted = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: olga,
      decision: 'approve_for_conversation',
    });
    expect(granted).toMatchObject({
      ok: true,
      card: { calls: [{ status: 'approved', standingUntil: expect.any(Date) }] },
    });
    await app.settle();
    const cards = platform.cards.length;

    await askForTools(app, address, [['restart_service', { service: 'db' }]]);
    expect(platform.cards).toHaveLength(cards);
    expect(paths()).toEqual(['/restart_service', '/restart_service']);
    const [grant] = await app.butler.store.grants.listActive(
      `console:local:ops:${address.thread}`,
      new Date(),
    );
    const rows = await app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.grantId, grant?.id ?? ''));
    expect(rows).toMatchObject([
      { decision: 'granted', outcome: 'succeeded', actor: 'ana', decidedBy: 'olga' },
    ]);

    await askForTools(app, newAddress(), [['restart_service', { service: 'elsewhere' }]]);
    expect(platform.cards).toHaveLength(cards + 1);
  });

  it('revokes standing approvals only for an approver, after which the tool asks again', async () => {
    const address = newAddress();
    await askForTools(app, address, [['scale_service', { service: 'api' }]]);
    model.enqueue({ text: 'Scaled.' });
    await app.butler.service.decide({
      approvalId: lastCall().approvalId,
      platform: 'console',
      user: pat,
      decision: 'approve_for_conversation',
    });
    await app.settle();

    await say(app, address, 'revoke', ana);
    expect(platform.finalTexts().at(-1)).toBe('Only an approver can revoke standing approvals.');
    await say(app, address, 'Revoke', olga);
    expect(platform.finalTexts().at(-1)).toMatch(
      /^Revoked the standing approval here; these tools ask again:\n- scale_service \(allowed by Pat until/,
    );
    expect(model.requests.map((request) => request.messages.at(-1)?.content)).not.toContain('revoke');

    const cards = platform.cards.length;
    await askForTools(app, address, [['scale_service', { service: 'api' }]]);
    expect(platform.cards).toHaveLength(cards + 1);
  });
});

describe(`standing approvals over time on ${databaseKind}`, () => {
  it('ends a standing approval when it expires, and keeps it across a restart until then', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-grant-'));
    // Hours, then the test moves the grant's expiry into the past: a restart never races a real clock.
    const options = { ...appOptions({ standingApprovalHours: 2 }), dataDir };
    const first = await startTestButler(options);
    const address = newAddress();
    let second: TestButler | undefined;
    try {
      await askForTools(first, address, [['restart_service', { service: 'api' }]]);
      model.enqueue({ text: 'Restarted.' });
      await first.butler.service.decide({
        approvalId: lastCall().approvalId,
        platform: 'console',
        user: olga,
        decision: 'approve_for_conversation',
      });
      await first.settle();
      await first.stop();

      second = await startTestButler({
        ...options,
        ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}),
      });
      const cards = platform.cards.length;
      await askForTools(second, address, [['restart_service', { service: 'again' }]]);
      expect(platform.cards).toHaveLength(cards);
      expect(toolServer.requests).toHaveLength(2);

      const key = `console:local:ops:${address.thread}`;
      const [grant] = await second.butler.store.grants.listActive(key, new Date());
      expect(grant?.expiresAt.getTime()).toBeGreaterThan(Date.now() + 1.9 * 3_600_000);
      await second.butler.database.db
        .update(approvalGrants)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(approvalGrants.conversationKey, key));
      await askForTools(second, address, [['restart_service', { service: 'later' }]]);
      expect(platform.cards).toHaveLength(cards + 1);
      expect(toolServer.requests).toHaveLength(2);
    } finally {
      await second?.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
