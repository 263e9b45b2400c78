import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { inboundMessage } from '../../helpers/messages.js';
import { latch, waitFor } from '../../helpers/wait-for.js';
import {
  agentOptions,
  ana,
  ask,
  byAgent,
  delegating,
  newAddress,
  olga,
  toolResults,
  useAgentButler,
} from './agent-fixtures.js';

/**
 * A sub-agent's risky call parks the whole turn on Butler's card, durably: after the decision (and after a
 * restart in between) the sub-agent goes on, finishes, and Butler answers with its result.
 */

const suite = useAgentButler();

const opsRequests = () => suite.model.requests.filter(byAgent('ops'));
const restart = (id: string) => ({
  toolCalls: [{ id, name: 'restart_service', arguments: '{"service":"payments-api"}' }],
});

function lastCall(): ApprovalCardCall {
  const call = suite.platform.lastCard().card.calls[0];
  if (!call) throw new Error('no card call');
  return call;
}

const decide = (target: TestButler, decision: 'approve' | 'reject', reason?: string) =>
  target.butler.service.decide({
    approvalId: lastCall().approvalId,
    platform: 'console',
    user: olga,
    decision,
    ...(reason ? { reason } : {}),
  });

describe(`approvals inside sub-agents on ${databaseKind}`, () => {
  it('counts everyone a folded turn answers as a requester of a sub-agent call too', async () => {
    const address = newAddress();
    // Olga (the approver) asks while Butler still answers Ana; Ana adds "ok"; both fold into one turn.
    const firstAnswer = latch();
    suite.model.enqueue(
      async () => {
        await firstAnswer.opened;
        return { text: 'One moment.', chunks: ['One ', 'moment.'] };
      },
      delegating(['ops', 'Restart payments-api.']),
    );
    suite.model.enqueueFor(byAgent('ops'), restart('ops_folded'));
    const say = (user: { id: string; name: string }, text: string) =>
      suite.app.butler.service.accept(inboundMessage({ text, address, user, isDirect: false }));
    await say(ana, 'hello');
    await suite.model.waitForRequests(1);
    await say(olga, 'restart payments-api please');
    await say(ana, 'ok');
    firstAnswer.open();
    await suite.app.settle();
    expect(suite.platform.lastCard().card.requesters).toEqual([olga, ana]);
    expect(lastCall()).toMatchObject({
      agent: 'ops',
      whoMayApprove: 'an approver other than the people who asked',
    });
    expect(await decide(suite.app, 'approve')).toMatchObject({ ok: false, code: 'not_authorized' });
    expect(suite.tools.requests).toEqual([]);
  });

  it('parks the turn on a card that names the agent, then runs the tool once and finishes both loops', async () => {
    suite.model.enqueue(delegating(['ops', 'Restart payments-api.']));
    suite.model.enqueueFor(byAgent('ops'), restart('ops_restart'));
    await ask(suite.app, newAddress(), 'restart payments-api please');

    expect(suite.tools.requests).toEqual([]);
    expect(lastCall()).toMatchObject({
      agent: 'ops',
      toolName: 'restart_service',
      status: 'pending',
      risk: 'high',
    });
    expect(suite.platform.lastCard().card.requesters).toMatchObject([{ id: 'ana' }]);
    expect(suite.platform.finalTexts().at(-1)).toBe('_Asking ops…_');

    suite.model.enqueueFor(byAgent('ops'), { text: 'Restarted payments-api; healthy.' });
    suite.model.enqueue({ text: 'payments-api was restarted and is healthy.' });
    expect(await decide(suite.app, 'approve')).toMatchObject({ ok: true });
    await suite.app.settle();
    expect(await decide(suite.app, 'approve')).toMatchObject({ ok: false, code: 'already_decided' });
    await suite.app.settle();

    expect(suite.tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
    expect(opsRequests()[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'ops_restart',
      content: '{"ok":true}',
    });
    expect(Object.values(toolResults(suite.model, 1))).toEqual(['Restarted payments-api; healthy.']);
    expect(suite.platform.finalTexts().at(-1)).toBe(
      '_Asking ops…_\n\npayments-api was restarted and is healthy.',
    );
  });

  it('tells the sub-agent about a rejection; it reports back and nothing runs', async () => {
    suite.model.enqueue(delegating(['ops', 'Restart payments-api.']));
    suite.model.enqueueFor(byAgent('ops'), restart('ops_restart_r'));
    await ask(suite.app, newAddress(), 'restart payments-api');

    suite.model.enqueueFor(byAgent('ops'), { text: 'The restart was rejected: change freeze.' });
    suite.model.enqueue({ text: 'I did not restart it: the change freeze.' });
    await decide(suite.app, 'reject', 'change freeze');
    await suite.app.settle();
    expect(suite.tools.requests).toEqual([]);
    expect(String(opsRequests()[1]?.messages.at(-1)?.content)).toBe(
      'Rejected by Olga with the reason: "change freeze". The tool was not run.',
    );
    expect(Object.values(toolResults(suite.model, 1))).toEqual(['The restart was rejected: change freeze.']);
  });

  it('tells the sub-agent when the request expired', async () => {
    const shortLived = await startTestButler(
      agentOptions(suite.model, suite.tools, suite.platform, { config: { approvalTtlMinutes: 0.005 } }),
    );
    try {
      suite.model.enqueue(delegating(['ops', 'Restart payments-api.']));
      suite.model.enqueueFor(byAgent('ops'), restart('ops_restart_e'));
      await ask(shortLived, newAddress(), 'restart payments-api');
      suite.model.enqueueFor(byAgent('ops'), { text: 'Nobody approved the restart in time.' });
      suite.model.enqueue({ text: 'The restart request expired.' });
      // The request lives 300 ms; a sweep after that expires it, however long the machine takes to get there.
      await waitFor(() => suite.platform.lastCard().updates.at(-1)?.calls[0]?.status === 'expired', 10_000);
      await shortLived.settle();
      expect(suite.tools.requests).toEqual([]);
      expect(String(opsRequests()[1]?.messages.at(-1)?.content)).toMatch(
        /^Nobody decided .* before it expired/,
      );
      expect(suite.platform.lastCard().updates.at(-1)?.calls[0]).toMatchObject({
        status: 'expired',
        agent: 'ops',
      });
      expect(suite.platform.finalTexts().at(-1)).toContain('The restart request expired.');
    } finally {
      await shortLived.close();
    }
  });

  it('asks two agents at once; one waits for an approval given after a restart; one answer comes of both', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-agents-'));
    const first = await startTestButler({
      ...agentOptions(suite.model, suite.tools, suite.platform),
      dataDir,
    });
    const address = newAddress();
    suite.model.enqueue(
      delegating(['ops', 'Restart payments-api.'], ['docs', 'What does the runbook say after a restart?']),
    );
    suite.model.enqueueFor(byAgent('ops'), restart('ops_restart_x'));
    suite.model.enqueueFor(byAgent('docs'), { text: 'Runbook: watch error rates for 10 minutes.' });
    await ask(first, address, 'restart payments-api and tell me what to watch');
    expect(lastCall()).toMatchObject({ agent: 'ops', status: 'pending' });
    await first.stop();

    const second = await startTestButler({
      ...agentOptions(suite.model, suite.tools, suite.platform),
      dataDir,
      ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}),
    });
    try {
      suite.model.enqueueFor(byAgent('ops'), { text: 'payments-api restarted.' });
      suite.model.enqueue({ text: 'Restarted payments-api. Watch error rates for 10 minutes.' });
      expect(await decide(second, 'approve')).toMatchObject({ ok: true });
      await second.settle();

      expect(suite.tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
      // docs ran once, before the restart; its result was kept in the parked state.
      expect(suite.model.requests.filter(byAgent('docs'))).toHaveLength(1);
      expect(Object.values(toolResults(suite.model, 1))).toEqual([
        'payments-api restarted.',
        'Runbook: watch error rates for 10 minutes.',
      ]);
      expect(suite.platform.finalTexts().at(-1)).toContain(
        'Restarted payments-api. Watch error rates for 10 minutes.',
      );
      expect(suite.platform.replies.at(-1)?.target.address).toEqual(address);
    } finally {
      await second.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
