import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';

/**
 * Decisions taken off the request's card (Slack's App Home): one call, approve or reject, on the request's own
 * platform, never with a card message; and the home read that offers them (PGlite, and Postgres).
 */

let core: CoreIntake;
const approver = { id: 'U0APPROVER', name: 'olga' };
const alice = { id: 'U0ALICE', name: 'alice' };

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { slack: [approver.id], feishu: ['ou_approver'] } });
});
afterAll(() => core.close());
beforeEach(() => core.reset());

const offCard = { platform: 'slack' as const, user: approver, offCard: true as const };

describe('off-card decisions', () => {
  it('refuse a batch, a standing approval, a card message and another platform; decide one call once', async () => {
    const [first] = await core.pendingBatch({ platform: 'slack', requester: alice, services: ['a', 'b'] });
    if (!first) throw new Error('no batch');
    const refused = [
      await core.intake.decide({ ...offCard, batchId: first.batchId, decision: 'approve' }),
      await core.intake.decide({ ...offCard, approvalId: first.id, decision: 'approve_for_conversation' }),
      await core.intake.decide({ ...offCard, approvalId: first.id, decision: 'approve', cardMessageId: 'x' }),
      await core.intake.decide({
        ...offCard,
        platform: 'api',
        user: { id: 'ops' },
        approvalId: first.id,
        decision: 'approve',
      }),
    ];
    expect(refused.map((result) => result.ok)).toEqual([false, false, false, false]);
    expect((await core.approval(first.id)).status).toBe('pending');

    const decided = await core.intake.decide({ ...offCard, approvalId: first.id, decision: 'approve' });
    expect(decided.ok).toBe(true);
    const again = await core.intake.decide({ ...offCard, approvalId: first.id, decision: 'reject' });
    expect(again).toMatchObject({ ok: false, code: 'already_decided' });
    expect((await core.approval(first.id)).status).toBe('approved');
  });

  it('are refused to someone who may not decide; the home read shows them the request without the right', async () => {
    const approval = await core.pendingApproval({ platform: 'slack', requester: alice, risk: 'high' });
    const byAlice = await core.intake.decide({
      ...offCard,
      user: alice,
      approvalId: approval.id,
      decision: 'approve',
    });
    expect(byAlice).toMatchObject({ ok: false, code: 'not_authorized' });

    const aliceHome = await core.intake.home({ platform: 'slack', id: alice.id });
    expect(aliceHome.approvals.map((item) => [item.id, item.mayDecide])).toEqual([[approval.id, false]]);
    const approverHome = await core.intake.home({ platform: 'slack', id: approver.id });
    expect(approverHome.approvals.map((item) => [item.id, item.mayDecide])).toEqual([[approval.id, true]]);
    expect((await core.intake.home({ platform: 'slack', id: 'U0OTHER' })).approvals).toEqual([]);
    // Another platform's approver sees none of Slack's requests.
    expect((await core.intake.home({ platform: 'feishu', id: 'ou_approver' })).approvals).toEqual([]);
  });
});
