import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CoreIntake, cardMessages, startCoreIntake } from '../../helpers/core-intake.js';
import { databaseKind } from '../../helpers/database.js';

/**
 * Decisions by people, not identities (`people:`), through the intake and the database: Olga's Slack click and
 * her API key are one approval of a two-person quorum, even when they race; what she asked for through one
 * identity she approves through none; her home page shows what her key asked for.
 */

let core: CoreIntake;
const olga = { id: 'U0OLGA', name: 'Olga' };
const olgaKey = { id: 'olga' };
const patKey = { id: 'pat' };
const alice = { id: 'U0ALICE', name: 'Alice' };

beforeAll(async () => {
  core = await startCoreIntake({
    approvers: { slack: [olga.id], api: ['pat'] },
    people: [{ name: 'olga', slack: olga.id, feishu: 'ou_olga', api: olgaKey.id }],
    quorum: { high: 2 },
  });
});
afterAll(() => core.close());
beforeEach(() => core.reset());

const onCard = (approvalId: string) => ({
  platform: 'slack' as const,
  user: olga,
  approvalId,
  decision: 'approve' as const,
  cardMessageId: cardMessages.slack,
});
const overApi = (approvalId: string, user: { id: string }) => ({
  platform: 'api' as const,
  user,
  approvalId,
  decision: 'approve' as const,
});

describe(`people deciding on ${databaseKind}`, () => {
  it("counts olga once toward a quorum of two: her API key's approval after her click is refused", async () => {
    const approval = await core.pendingApproval({ platform: 'slack', requester: alice, risk: 'high' });
    expect(await core.intake.decide(onCard(approval.id))).toMatchObject({ ok: true });

    const again = await core.intake.decide(overApi(approval.id, olgaKey));
    expect(again).toMatchObject({
      ok: false,
      code: 'not_authorized',
      message: expect.stringContaining('You approved it already, as slack U0OLGA'),
    });
    // The console offers her key no button either, and says why.
    expect(
      core.intake.mayDecide(await core.approval(approval.id), { platform: 'api', id: olgaKey.id }),
    ).toEqual({
      allowed: false,
      reason: expect.stringContaining('a person counts once'),
    });
    const waiting = await core.approval(approval.id);
    expect(waiting.status).toBe('pending');
    expect(waiting.votes.map((vote) => [vote.platform, vote.id])).toEqual([['slack', olga.id]]);

    expect(await core.intake.decide(overApi(approval.id, patKey))).toMatchObject({ ok: true });
    const decided = await core.approval(approval.id);
    expect(decided.status).toBe('approved');
    expect(decided.votes.map((vote) => vote.id)).toEqual([olga.id, patKey.id]);
  });

  it('counts one approval when her click and her API call race', async () => {
    const approval = await core.pendingApproval({ platform: 'slack', requester: alice, risk: 'high' });
    const results = await Promise.all([
      core.intake.decide(onCard(approval.id)),
      core.intake.decide(overApi(approval.id, olgaKey)),
    ]);
    expect(results.map((result) => result.ok).sort()).toEqual([false, true]);
    const waiting = await core.approval(approval.id);
    expect(waiting.status).toBe('pending');
    expect(waiting.votes).toHaveLength(1);
  });

  it('refuses olga on Slack a request her API key asked for, and shows it on her home page as hers', async () => {
    // A task her key scheduled into a Slack channel: its runs ask as the key.
    const approval = await core.pendingApproval({
      platform: 'slack',
      requester: { ...olgaKey, platform: 'api' },
      risk: 'high',
    });
    expect(await core.intake.decide(onCard(approval.id))).toMatchObject({
      ok: false,
      code: 'not_authorized',
      message: 'This needs 2 approvers other than the person who asked.',
    });
    const home = await core.intake.home({ platform: 'slack', id: olga.id });
    expect(home.approvals.map((item) => [item.id, item.mayDecide])).toEqual([[approval.id, false]]);
  });
});
