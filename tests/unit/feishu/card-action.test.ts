import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  decisionResponse,
  handleCardAction,
  parseButtonValue,
} from '../../../src/adapters/feishu/card-action.js';
import type { CardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { parseCardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import type { ApprovalCard, ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { waitFor } from '../../helpers/wait-for.js';
import { aliceOpenId, bobOpenId, cardActionEvent } from './feishu-events.js';

let core: CoreIntake;
let approvalId: string;

const call: ApprovalCardCall = {
  approvalId: 'appr_1',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart payments-api',
  argumentsJson: '{}',
  argumentsLength: 2,
  argumentsCut: false,
  risk: 'high',
  whoMayApprove: 'an approver other than the requester',
};

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { feishu: [bobOpenId] } });
});
afterAll(() => core.close());
beforeEach(async () => {
  await core.reset();
  ({ id: approvalId } = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } }));
});

function flattened(value: unknown, operatorOpenId: string, createTime?: number): CardActionEvent {
  const { header, event } = cardActionEvent({
    operatorOpenId,
    value,
    messageId: 'om_card',
    ...(createTime === undefined ? {} : { createTime }),
  }) as {
    header: object;
    event: object;
  };
  return parseCardActionEvent({ schema: '2.0', ...header, ...event });
}

interface ClickOptions {
  operatorOpenId?: string;
  value?: unknown;
  /** When Feishu sent the callback (epoch ms); default now. */
  createTime?: number;
  /** Production answers within 2.5 s; a short deadline only where a test holds the decision. */
  answerWithinMilliseconds?: number;
}

async function click(options: ClickOptions = {}) {
  const later: Array<[string, ApprovalCard]> = [];
  const value = options.value ?? { approval_id: approvalId, decision: 'approve' };
  const response = await handleCardAction(
    flattened(value, options.operatorOpenId ?? bobOpenId, options.createTime),
    {
      intake: core.intake,
      logger: silentLogger,
      now: Date.now,
      answerWithinMilliseconds: options.answerWithinMilliseconds ?? 2_500,
      updateCardLater: async (messageId, updated) => void later.push([messageId, updated]),
      sendArguments: async () => 0,
    },
  );
  return { response, later };
}

describe('Feishu card clicks', () => {
  it('reads button values as objects or JSON strings and refuses anything else', () => {
    expect(parseButtonValue({ approval_id: 'a', decision: 'reject' })).toEqual({
      approval_id: 'a',
      decision: 'reject',
    });
    expect(parseButtonValue('{"approval_id":"a","decision":"approve"}')).toEqual({
      approval_id: 'a',
      decision: 'approve',
    });
    expect(parseButtonValue({ approval_id: 'a', decision: 'maybe' })).toBeUndefined();
    expect(parseButtonValue('not json')).toBeUndefined();
  });

  it('reads standing approvals and Approve all / Reject all, refusing what no card sends', () => {
    expect(parseButtonValue({ approval_id: 'a', decision: 'approve_for_conversation' })).toEqual({
      approval_id: 'a',
      decision: 'approve_for_conversation',
    });
    expect(parseButtonValue({ batch_id: 'b', decision: 'approve' })).toEqual({
      batch_id: 'b',
      decision: 'approve',
    });
    expect(parseButtonValue('{"batch_id":"b","decision":"reject"}')).toEqual({
      batch_id: 'b',
      decision: 'reject',
    });
    // A standing approval is per tool; a value naming both a call and a batch is ambiguous.
    expect(parseButtonValue({ batch_id: 'b', decision: 'approve_for_conversation' })).toBeUndefined();
    expect(parseButtonValue({ approval_id: 'a', batch_id: 'b', decision: 'approve' })).toBeUndefined();
    expect(parseButtonValue({ batch_id: '', decision: 'approve' })).toBeUndefined();
  });

  it('reads Show all arguments, which carries no decision, refusing values that name more', () => {
    expect(parseButtonValue({ show_arguments: 'a' })).toEqual({ show_arguments: 'a' });
    expect(parseButtonValue('{"show_arguments_batch":"b"}')).toEqual({ show_arguments_batch: 'b' });
    expect(parseButtonValue({ show_arguments: 'a', decision: 'approve' })).toBeUndefined();
    expect(parseButtonValue({ show_arguments: 'a', approval_id: 'a' })).toBeUndefined();
    expect(parseButtonValue({ show_arguments: 'a', show_arguments_batch: 'b' })).toBeUndefined();
  });

  it("shows the core's message as an info toast and still replaces the card", () => {
    const card: ApprovalCard = {
      batchId: 'batch_1',
      calls: [
        { ...call, approvalId: 'appr_1', status: 'approved', decidedBy: { id: bobOpenId } },
        { ...call, approvalId: 'appr_2' },
      ],
      requesters: [{ id: aliceOpenId }],
      approverIds: [bobOpenId],
      expiresAt: new Date(Date.now() + 60_000),
    };
    const message = 'Decided 1 action; 1 action still needs someone else.';
    const response = decisionResponse(
      { ok: true, card, message },
      { batch_id: 'batch_1', decision: 'approve' },
    );
    expect(response.toast).toEqual({ type: 'info', content: message });
    expect(response.card).toMatchObject({ type: 'raw', data: { schema: '2.0' } });
    expect(JSON.stringify(response.card)).toContain('Approved by');
    // Without a message: what the click did and what happens next.
    expect(
      decisionResponse({ ok: true, card }, { approval_id: 'appr_1', decision: 'approve' }).toast,
    ).toEqual({
      type: 'success',
      content: 'Approved. Butler goes on once the last call is decided.',
    });
  });

  it('replaces the card with the outcome on a decision', async () => {
    const { response } = await click();
    expect(response.toast).toEqual({ type: 'success', content: 'Approved. Butler is running it now.' });
    expect(response.card?.type).toBe('raw');
    expect(JSON.stringify(response.card)).toContain('Approved by');
    expect(await core.approval(approvalId)).toMatchObject({
      status: 'approved',
      decidedBy: { id: bobOpenId },
    });
  });

  it('refuses a callback from outside the replay window and decides nothing', async () => {
    // Feishu never re-pushes a callback: one captured three days ago is a replay.
    for (const createTime of [Date.now() - 3 * 86_400_000, Date.now() + 3_600_000]) {
      const { response } = await click({ createTime });
      expect(response).toEqual({
        toast: { type: 'error', content: 'This click is too old to count. Please click again.' },
      });
    }
    expect((await core.approval(approvalId)).status).toBe('pending');
  });

  it('decides only the card the button is on', async () => {
    const other = await core.pendingApproval({
      platform: 'feishu',
      requester: { id: aliceOpenId },
      cardMessageId: 'om_other_card',
    });
    // The button value names the other request, but the click came from this card's message.
    const { response } = await click({ value: { approval_id: other.id, decision: 'approve' } });
    expect(response).toEqual({
      toast: { type: 'error', content: 'This button does not belong to this request.' },
    });
    expect((await core.approval(other.id)).status).toBe('pending');
  });

  it('leaves the card alone for an unauthorised clicker', async () => {
    const { response } = await click({ operatorOpenId: aliceOpenId });
    expect(response).toEqual({
      toast: {
        type: 'error',
        content: 'High-risk actions need an approver other than the person who asked.',
      },
    });
    expect((await core.approval(approvalId)).status).toBe('pending');
  });

  it('shows the current card after a second click or expiry', async () => {
    await click();
    const second = await click();
    expect(second.response.toast).toEqual({
      type: 'info',
      content: `This request was already approved by ${bobOpenId}.`,
    });
    expect(second.response.card?.data).toMatchObject({ header: { template: 'green' } });
    ({ id: approvalId } = await core.pendingApproval({
      platform: 'feishu',
      requester: { id: aliceOpenId },
      expiresAt: new Date(Date.now() - 1000),
    }));
    const expired = await click();
    expect(expired.response.toast).toEqual({
      type: 'warning',
      content: 'This request has expired; nothing was run.',
    });
    expect((await core.approval(approvalId)).decidedBy).toBeNull();
  });

  // Before the sweeper marks it expired, a late click must already show the card as expired.
  it('replaces the card of an approval past its deadline with an expired one', async () => {
    ({ id: approvalId } = await core.pendingApproval({
      platform: 'feishu',
      requester: { id: aliceOpenId },
      expiresAt: new Date(Date.now() - 1000),
    }));
    const { response } = await click();
    expect(response.card?.data).toMatchObject({ header: { template: 'grey' } });
  });

  it('answers with an error toast when the value is not an approval or deciding fails', async () => {
    const foreign = await click({ value: { something: 'else' } });
    expect(foreign.response.toast?.type).toBe('error');
    // A decision enqueues the turn's continuation in its transaction: a refused write fails it whole.
    const restore = await core.refuseInboxWrites();
    const failing = await click();
    await restore();
    expect(failing.response.toast).toEqual({
      type: 'error',
      content: 'Butler could not record that decision. Please try again.',
    });
    expect((await core.approval(approvalId)).status).toBe('pending');
  });

  it('answers before the deadline when deciding is slow and updates the card afterwards', async () => {
    // A concurrent decision holds the approval, so deciding waits past the deadline.
    const lock = await core.holdApproval(approvalId);
    const { response, later } = await click({ answerWithinMilliseconds: 100 });
    expect(response.toast?.type).toBe('info');
    expect(response.card).toBeUndefined();
    expect(later).toEqual([]);
    await lock.release();
    await waitFor(() => later.length > 0);
    expect(later).toEqual([
      [
        'om_card',
        expect.objectContaining({
          calls: [
            expect.objectContaining({
              approvalId,
              status: 'approved',
              decidedBy: { id: bobOpenId, platform: 'feishu' },
            }),
          ],
        }),
      ],
    ]);
  });

  it('approves for the conversation from the third button', async () => {
    const { response } = await click({
      value: { approval_id: approvalId, decision: 'approve_for_conversation' },
    });
    expect(response.toast?.type).toBe('success');
    expect(response.toast?.content).toMatch(
      // In the clicker's own time zone, as their client reports it, with the date: grants last days.
      /^Approved for this conversation until \d{1,2} \w{3} \d{4}, \d\d:\d\d \(Asia\/Shanghai\)\. Butler is running it now\.$/,
    );
    expect(JSON.stringify(response.card)).toContain('Approved for this conversation by');
    expect(JSON.stringify(response.card)).not.toContain('"button"');
    expect(await core.approval(approvalId)).toMatchObject({
      status: 'approved',
      standingUntil: expect.any(Date),
    });
  });

  it('decides one call of a card of several, then the rest with Approve all', async () => {
    const batch = await core.pendingBatch({
      platform: 'feishu',
      requester: { id: aliceOpenId },
      services: ['api', 'web', 'db'],
    });
    const [first, second, third] = batch.map((approval) => approval.id);
    const one = await click({ value: { approval_id: first, decision: 'reject' } });
    expect(one.response.toast).toEqual({
      type: 'success',
      content: 'Rejected. Butler goes on once the other 2 calls are decided.',
    });
    expect(one.response.card?.data).toMatchObject({
      header: { title: { content: '2 of 3 actions need approval' } },
    });
    const stillThere = JSON.stringify(one.response.card);
    expect(stillThere).not.toContain('"approve_0"');
    for (const id of ['approve_1', 'approve_2', 'approve_all']) expect(stillThere).toContain(`"${id}"`);

    const batchId = batch[0]?.batchId;
    const all = await click({ value: { batch_id: batchId, decision: 'approve' } });
    expect(all.response.toast).toEqual({
      type: 'success',
      content: 'Approved all. Butler is running the 2 approved calls now.',
    });
    expect(JSON.stringify(all.response.card)).not.toContain('"button"');
    expect((await core.approval(first as string)).status).toBe('rejected');
    expect((await core.approval(second as string)).status).toBe('approved');
    expect((await core.approval(third as string)).status).toBe('approved');

    // The card is done: a second Approve all only shows it again.
    const again = await click({ value: { batch_id: batchId, decision: 'approve' } });
    expect(again.response.toast?.type).toBe('info');
  });

  it('refuses Approve all to the requester of high-risk calls and keeps the card', async () => {
    const batch = await core.pendingBatch({
      platform: 'feishu',
      requester: { id: aliceOpenId },
      services: ['api', 'web'],
    });
    const { response } = await click({
      operatorOpenId: aliceOpenId,
      value: { batch_id: batch[0]?.batchId, decision: 'approve' },
    });
    expect(response.toast?.type).toBe('error');
    expect(response.card).toBeUndefined();
    for (const approval of batch) expect((await core.approval(approval.id)).status).toBe('pending');
  });
});
