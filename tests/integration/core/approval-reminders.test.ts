import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { ageRequest, hour } from '../../helpers/approval-clock.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { butlersOnOneDatabase } from '../../helpers/one-database.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * Reminders and escalation of waiting requests, with short delays: each approver who has not decided gets the
 * card directly once, then the on-call does; the cards sent are decidable; restarts repeat nothing.
 */

const onOneDatabase = butlersOnOneDatabase('butler-reminders-');
let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let thread = 0;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };

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

async function start(
  timing: { remindAfter: string; escalateAfter: string },
  extra: { approvalTtlMinutes?: number; onExpiry?: 'reject' } = {},
): Promise<TestButler> {
  const app = await onOneDatabase({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['olga', 'pat', 'oncall'] },
      approvalPolicy: {
        quorum: { high: 2 },
        ...timing,
        escalateTo: { console: ['oncall'] },
        ...(extra.onExpiry ? { onExpiry: extra.onExpiry } : {}),
      },
      ...(extra.approvalTtlMinutes ? { approvalTtlMinutes: extra.approvalTtlMinutes } : {}),
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
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `r${thread}` };
}

async function askForRestart(app: TestButler) {
  model.enqueue({
    toolCalls: [{ id: `call_${thread}`, name: 'restart_service', arguments: '{"service":"api"}' }],
  });
  await app.butler.service.accept(
    inboundMessage({ text: 'restart api', address: newAddress(), user: ana, isDirect: false }),
  );
  await app.settle();
  return platform.lastCard();
}

const sentTo = (id: string) => platform.directChats.filter((chat) => chat.user.id === id);
const cardsIn = (channel: string) => platform.cards.filter((card) => card.target.address.channel === channel);

describe(`reminders and escalation (${databaseKind})`, () => {
  it('reminds each approver who has not approved once, escalates once, and the cards sent decide the request', async () => {
    const app = await start({ remindAfter: '1h', escalateAfter: '2h' });
    const channelCard = await askForRestart(app);
    const approvalId = channelCard.card.calls[0]?.approvalId ?? '';
    await app.butler.service.decide({ approvalId, platform: 'console', user: olga, decision: 'approve' });

    // Aged past the reminder only after Olga's approval, so the test never races a real delay.
    await ageRequest(app.butler.database, approvalId, hour);
    await waitFor(() => sentTo('pat').length > 0 && sentTo('oncall').length > 0, 10_000);
    // Olga approved already, Ana asked: neither is reminded.
    expect(sentTo('olga')).toEqual([]);
    expect(sentTo('ana')).toEqual([]);
    expect(cardsIn('Dpat')).toHaveLength(1);
    await ageRequest(app.butler.database, approvalId, hour);
    await waitFor(() => sentTo('oncall').length === 2, 10_000);
    expect(sentTo('oncall')[1]?.note).toMatch(/^Escalated to you: a request has waited/);
    // The channel's card is redrawn after the people are told: wait for it, however long that takes.
    await waitFor(
      () => /escalated to oncall at/.test(channelCard.updates.at(-1)?.calls[0]?.whoMayApprove ?? ''),
      10_000,
    );
    await delay(800);
    expect(sentTo('pat')).toHaveLength(1);
    expect(sentTo('oncall')).toHaveLength(2);
    // The channel's card says who was told, and when.
    const shown = channelCard.updates.at(-1)?.calls[0]?.whoMayApprove ?? '';
    expect(shown).toMatch(
      /1 of 2 approvals: Olga; reminded pat, oncall at \d\d:\d\d UTC; escalated to oncall at \d\d:\d\d UTC$/,
    );

    // Pat decides on the card Butler sent them; the channel's card shows it, and the call runs once.
    model.enqueue({ text: 'Restarted api.' });
    const patCard = cardsIn('Dpat')[0];
    const decided = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: { id: 'pat', name: 'Pat' },
      decision: 'approve',
      cardMessageId: patCard?.messageId ?? '',
    });
    expect(decided.ok).toBe(true);
    await app.settle();
    expect(toolServer.requests).toHaveLength(1);
    expect(channelCard.updates.at(-1)?.calls[0]?.status).toBe('approved');
    // A click on a card of another request, or a made-up message, still decides nothing.
    expect(
      (
        await app.butler.service.decide({
          approvalId,
          platform: 'console',
          user: { id: 'oncall' },
          decision: 'approve',
          cardMessageId: 'card-of-something-else',
        })
      ).ok,
    ).toBe(false);
  });

  it('reminds nobody while the workspace is without Butler, and counts from its return, not from the ask', async () => {
    const app = await start({ remindAfter: '1h', escalateAfter: '2h' });
    const card = await askForRestart(app);
    const approvalId = card.card.calls[0]?.approvalId ?? '';
    await app.butler.service.workspaceRemoved('console', 'local');
    // Asked three hours ago: both stages fall due, and a paused request gets neither.
    await ageRequest(app.butler.database, approvalId, 3 * hour);
    await delay(800);
    expect(platform.directChats).toEqual([]);
    // Back: the request waits a whole reminder period again before anyone is reminded.
    await app.butler.service.workspaceInstalled('console', 'local');
    await delay(800);
    expect(platform.directChats).toEqual([]);
    await ageRequest(app.butler.database, approvalId, hour);
    await waitFor(() => sentTo('olga').length > 0 && sentTo('pat').length > 0, 10_000);
    expect(sentTo('oncall').map((chat) => chat.note)).not.toContainEqual(
      expect.stringMatching(/^Escalated to you/),
    );
  });

  it('reminds once across a restart: a reminder due while Butler was down is sent after it, and not again', async () => {
    const before = await start({ remindAfter: '600ms', escalateAfter: '1h' });
    await askForRestart(before);
    await before.stop();
    await delay(900);
    const after = await start({ remindAfter: '600ms', escalateAfter: '1h' });
    await waitFor(() => sentTo('pat').length > 0, 10_000);
    await delay(1_000);
    expect(sentTo('pat')).toHaveLength(1);
    expect(sentTo('olga')).toHaveLength(1);
    await after.stop();
    const again = await start({ remindAfter: '600ms', escalateAfter: '1h' });
    await delay(1_000);
    await again.settle();
    expect(sentTo('pat')).toHaveLength(1);
  });

  it('with onExpiry: reject, a request nobody decided in time is rejected, and the turn goes on knowing it', async () => {
    const app = await start(
      { remindAfter: '1h', escalateAfter: '2h' },
      { approvalTtlMinutes: 0.02, onExpiry: 'reject' },
    );
    const card = await askForRestart(app);
    model.enqueue({ text: 'Nobody approved the restart in time.' });
    await waitFor(() => card.updates.at(-1)?.calls[0]?.status === 'rejected', 10_000);
    expect(card.updates.at(-1)?.calls[0]).toMatchObject({
      status: 'rejected',
      reason: 'nobody decided in time',
    });
    await app.settle();
    expect(toolServer.requests).toHaveLength(0);
    expect(platform.finalTexts().at(-1)).toBe('Nobody approved the restart in time.');
  });
});
