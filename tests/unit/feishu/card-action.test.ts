import { describe, expect, it } from 'vitest';
import { handleCardAction, parseButtonValue } from '../../../src/adapters/feishu/card-action.js';
import type { CardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { parseCardActionEvent } from '../../../src/adapters/feishu/event-payloads.js';
import type { ButlerIntake } from '../../../src/core/adapter.js';
import type { ApprovalCard } from '../../../src/core/approval-card.js';
import type { DecisionResult } from '../../../src/core/approvals/decision.js';
import { silentLogger } from '../../../src/core/logger.js';
import { bobOpenId, cardActionEvent } from './feishu-events.js';

const card: ApprovalCard = {
  approvalId: 'appr_1',
  status: 'approved',
  toolName: 'restart_service',
  summary: 'Restart payments',
  argumentsJson: '{}',
  risk: 'high',
  requester: { id: 'ou_alice' },
  whoMayApprove: 'an approver other than the requester',
  approverIds: ['ou_bob'],
  expiresAt: new Date('2026-12-01T12:00:00Z'),
  decidedBy: { id: 'ou_bob' },
  decidedAt: new Date('2026-12-01T11:00:00Z'),
};

function flattened(value: unknown): CardActionEvent {
  const { header, event } = cardActionEvent({ operatorOpenId: bobOpenId, value, messageId: 'om_card' }) as {
    header: object;
    event: object;
  };
  return parseCardActionEvent({ schema: '2.0', ...header, ...event });
}

function intakeDeciding(result: () => Promise<DecisionResult>): ButlerIntake {
  return {
    accept: async () => ({ status: 'duplicate' }),
    decide: result,
    isKnownConversation: async () => false,
  };
}

async function click(
  result: () => Promise<DecisionResult>,
  value: unknown = { approval_id: 'appr_1', decision: 'approve' },
) {
  const later: Array<[string, ApprovalCard]> = [];
  const response = await handleCardAction(flattened(value), {
    intake: intakeDeciding(result),
    logger: silentLogger,
    answerWithinMilliseconds: 100,
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
    const { response } = await click(async () => ({ ok: true, card }));
    expect(response.toast).toEqual({ type: 'success', content: 'Approved. Butler is running it now.' });
    expect(response.card?.type).toBe('raw');
    expect(JSON.stringify(response.card)).toContain('Approved by');
  });

  it('leaves the card alone for an unauthorised clicker', async () => {
    const { response } = await click(async () => ({
      ok: false,
      code: 'not_authorized',
      message: 'Only an approver other than the requester can approve this.',
    }));
    expect(response).toEqual({
      toast: { type: 'error', content: 'Only an approver other than the requester can approve this.' },
    });
  });

  it('shows the current card after a second click or expiry', async () => {
    const second = await click(async () => ({
      ok: false,
      code: 'already_decided',
      message: 'Already approved.',
      card,
    }));
    expect(second.response.toast).toEqual({ type: 'info', content: 'Already approved.' });
    expect(second.response.card?.data).toMatchObject({ header: { template: 'green' } });
    const expired = await click(async () => ({
      ok: false,
      code: 'expired',
      message: 'This request expired.',
    }));
    expect(expired.response).toEqual({ toast: { type: 'warning', content: 'This request expired.' } });
  });

  it('answers with an error toast when the value is not an approval or deciding fails', async () => {
    const foreign = await click(async () => ({ ok: true, card }), { something: 'else' });
    expect(foreign.response.toast?.type).toBe('error');
    const failing = await click(async () => {
      throw new Error('database down');
    });
    expect(failing.response.toast?.type).toBe('error');
  });

  it('answers before the deadline when deciding is slow and updates the card afterwards', async () => {
    const started = Date.now();
    const { response, later } = await click(
      () => new Promise((resolve) => setTimeout(() => resolve({ ok: true, card }), 300)),
    );
    expect(Date.now() - started).toBeLessThan(290);
    expect(response.toast?.type).toBe('info');
    expect(response.card).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(later).toEqual([['om_card', card]]);
  });
});
