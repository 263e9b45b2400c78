import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handleCardAction, parseButtonValue } from '../../../src/adapters/feishu/card-action.js';
import type { CardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { parseCardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import type { ApprovalCard } from '../../../src/core/approval-card.js';
import { silentLogger } from '../../../src/core/logger.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { waitFor } from '../../helpers/wait-for.js';
import { aliceOpenId, bobOpenId, cardActionEvent } from './feishu-events.js';

let core: CoreIntake;
let approvalId: string;

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { feishu: [bobOpenId] } });
});
afterAll(() => core.close());
beforeEach(async () => {
  await core.reset();
  ({ id: approvalId } = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } }));
});

function flattened(value: unknown, operatorOpenId: string): CardActionEvent {
  const { header, event } = cardActionEvent({ operatorOpenId, value, messageId: 'om_card' }) as {
    header: object;
    event: object;
  };
  return parseCardActionEvent({ schema: '2.0', ...header, ...event });
}

interface ClickOptions {
  operatorOpenId?: string;
  value?: unknown;
  /** Production answers within 2.5 s; a short deadline only where a test holds the decision. */
  answerWithinMilliseconds?: number;
}

async function click(options: ClickOptions = {}) {
  const later: Array<[string, ApprovalCard]> = [];
  const value = options.value ?? { approval_id: approvalId, decision: 'approve' };
  const response = await handleCardAction(flattened(value, options.operatorOpenId ?? bobOpenId), {
    intake: core.intake,
    logger: silentLogger,
    answerWithinMilliseconds: options.answerWithinMilliseconds ?? 2_500,
    updateCardLater: async (messageId, updated) => void later.push([messageId, updated]),
  });
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
      ['om_card', expect.objectContaining({ approvalId, status: 'approved', decidedBy: { id: bobOpenId } })],
    ]);
  });
});
