import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress, Decision } from '../../../src/core/contracts/events.js';
import { approvalGrants } from '../../../src/storage/schema.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { butlersOnOneDatabase } from '../../helpers/one-database.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * Two-person approvals (`approvalPolicy.quorum`): a high-risk call runs once, when the second distinct
 * approver who did not ask approves it; one reject ends it; across restarts and processes.
 */

const onOneDatabase = butlersOnOneDatabase('butler-quorum-');
let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let thread = 0;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };
const pat = { id: 'pat', name: 'Pat' };

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

/** A Butler on the test's database (a second one shares it: a restart, or another process on Postgres). */
async function start(): Promise<TestButler> {
  const app = await onOneDatabase({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['olga', 'pat', 'quinn'] },
      approvalPolicy: { quorum: { high: 2 } },
      tools: [
        {
          name: 'restart_service',
          description: 'Restart a service.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${toolServer.url}/restart_service` },
        },
      ],
    },
    adapters: [platform],
  });
  return app;
}

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `q${thread}` };
}

/** Ana asks for restarts of `services` in one step; returns the card's batch id and its calls' ids. */
async function askForRestarts(app: TestButler, address: ConversationAddress, services: string[]) {
  model.enqueue({
    toolCalls: services.map((service) => ({
      id: `call_${thread}_${service}`,
      name: 'restart_service',
      arguments: JSON.stringify({ service }),
    })),
  });
  await app.butler.service.accept(inboundMessage({ text: 'restart', address, user: ana, isDirect: false }));
  await app.settle();
  const { card } = platform.lastCard();
  return { batchId: card.batchId, approvalIds: card.calls.map((call) => call.approvalId) };
}

const decide = (
  app: TestButler,
  approvalId: string,
  user: { id: string; name: string },
  decision: Decision = 'approve',
) => app.butler.service.decide({ approvalId, platform: 'console', user, decision });

describe(`two-person approvals (${databaseKind})`, () => {
  it('counts the same approver once, never the requester, and runs the call once at the second approval', async () => {
    const app = await start();
    const address = newAddress();
    const [approvalId = ''] = (await askForRestarts(app, address, ['api'])).approvalIds;
    expect(platform.lastCard().card.calls[0]?.whoMayApprove).toBe(
      '2 approvers other than the requester; 0 of 2 approvals',
    );

    const own = await decide(app, approvalId, ana);
    expect(own).toMatchObject({
      ok: false,
      message: 'This needs 2 approvers other than the person who asked.',
    });
    const first = await decide(app, approvalId, olga);
    expect(first.ok).toBe(true);
    if (first.ok) expect(first.card.calls[0]).toMatchObject({ status: 'pending' });
    if (first.ok)
      expect(first.card.calls[0]?.whoMayApprove).toBe(
        '2 approvers other than the requester; 1 of 2 approvals: Olga',
      );
    const again = await decide(app, approvalId, olga);
    expect(again).toMatchObject({
      ok: false,
      message: 'You approved it already: it waits for another approver.',
    });
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);

    model.enqueue({ text: 'Restarted api.' });
    const second = await decide(app, approvalId, pat);
    expect(second.ok).toBe(true);
    if (second.ok)
      expect(second.card.calls[0]).toMatchObject({ status: 'approved', decidedBy: { id: 'pat' } });
    await app.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(platform.finalTexts().at(-1)).toBe('Restarted api.');
    expect(await decide(app, approvalId, { id: 'quinn', name: 'Quinn' })).toMatchObject({
      ok: false,
      code: 'already_decided',
    });
  });

  it('ends the call at one reject, even after an approval', async () => {
    const app = await start();
    const [approvalId = ''] = (await askForRestarts(app, newAddress(), ['db'])).approvalIds;
    await decide(app, approvalId, olga);
    model.enqueue({ text: 'Not restarted.' });
    const rejected = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: pat,
      decision: 'reject',
      reason: 'not during the sale',
    });
    expect(rejected.ok && rejected.card.calls[0]?.status).toBe('rejected');
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);
    expect(platform.finalTexts().at(-1)).toBe('Not restarted.');
  });

  it('keeps the first approval across a restart; the second approval after it runs the call once', async () => {
    const before = await start();
    const [approvalId = ''] = (await askForRestarts(before, newAddress(), ['cache'])).approvalIds;
    await decide(before, approvalId, olga);
    // Stopped, it stays among the test's Butlers: its database is the test's, dropped when the test ends.
    await before.stop();

    const after = await start();
    model.enqueue({ text: 'Restarted cache.' });
    await decide(after, approvalId, pat);
    await after.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(platform.finalTexts().at(-1)).toBe('Restarted cache.');
  });

  it('"Approve all" gives each call one approval; two approvers run every call once', async () => {
    const app = await start();
    const { batchId } = await askForRestarts(app, newAddress(), ['api', 'db']);
    await app.butler.service.decide({ batchId, platform: 'console', user: olga, decision: 'approve' });
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);
    model.enqueue({ text: 'Restarted both.' });
    await app.butler.service.decide({ batchId, platform: 'console', user: pat, decision: 'approve' });
    await app.settle();
    expect(toolServer.requests.map((request) => request.body)).toEqual([
      { service: 'api' },
      { service: 'db' },
    ]);
  });

  it('grants a standing approval only when both approvers asked for it, and it covers later calls', async () => {
    const app = await start();
    const address = newAddress();
    const [firstId = ''] = (await askForRestarts(app, address, ['api'])).approvalIds;
    model.enqueue({ text: 'Done.' });
    await decide(app, firstId, olga, 'approve_for_conversation');
    await decide(app, firstId, pat);
    await app.settle();
    expect(await app.butler.database.db.select().from(approvalGrants)).toEqual([]);

    const [secondId = ''] = (await askForRestarts(app, address, ['db'])).approvalIds;
    model.enqueue({ text: 'Done again.' });
    await decide(app, secondId, olga, 'approve_for_conversation');
    await decide(app, secondId, pat, 'approve_for_conversation');
    await app.settle();
    const grants = await app.butler.database.db
      .select()
      .from(approvalGrants)
      .where(eq(approvalGrants.approvalId, secondId));
    expect(grants).toMatchObject([{ quorum: 2, risk: 'high' }]);

    // The grant two approvers gave covers the next call: it runs without a card.
    const cards = platform.cards.length;
    model.enqueue(
      {
        toolCalls: [
          { id: `call_${thread}_granted`, name: 'restart_service', arguments: '{"service":"web"}' },
        ],
      },
      { text: 'Restarted web.' },
    );
    await app.butler.service.accept(inboundMessage({ text: 'and web', address, user: ana, isDirect: false }));
    await app.settle();
    expect(platform.cards).toHaveLength(cards);
    expect(toolServer.requests).toHaveLength(3);
    expect(grants[0]?.grantors).toEqual([
      expect.objectContaining({ id: olga.id }),
      expect.objectContaining({ id: pat.id }),
    ]);

    // It never covers a high-risk call one of its grantors asks for: Olga's waits for a card.
    model.enqueue({
      toolCalls: [{ id: `call_${thread}_olga`, name: 'restart_service', arguments: '{"service":"cache"}' }],
    });
    await app.butler.service.accept(
      inboundMessage({ text: 'restart cache', address, user: olga, isDirect: false }),
    );
    await app.settle();
    expect(platform.cards).toHaveLength(cards + 1);
    expect(toolServer.requests).toHaveLength(3);
  });

  it.skipIf(databaseKind !== 'postgres')(
    'runs the call once when two approvers decide at the same moment in two processes',
    async () => {
      const left = await start();
      const right = await start();
      const [approvalId = ''] = (await askForRestarts(left, newAddress(), ['search'])).approvalIds;
      model.enqueue({ text: 'Restarted search.' });
      const results = await Promise.all([decide(left, approvalId, olga), decide(right, approvalId, pat)]);
      expect(results.every((result) => result.ok)).toBe(true);
      await left.settle();
      await right.settle();
      expect(toolServer.requests).toHaveLength(1);
    },
  );
});
