import { describe, expect, it } from 'vitest';
import {
  blockLimits,
  renderApprovalCard,
  renderRejectReasonView,
} from '../../../src/adapters/slack/approval-blocks.js';
import { parseCardClick, parseRejectSubmission } from '../../../src/adapters/slack/interactions.js';
import type { ApprovalCard } from '../../../src/core/approval-card.js';
import { blockKitViolations } from '../../helpers/fake-slack-api.js';
import { blockActions, rejectSubmission } from './payloads.js';

const card: ApprovalCard = {
  approvalId: '3f1c9a4e-1111-4c2b-9d7e-000000000001',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart the payments-api service in production',
  argumentsJson: JSON.stringify({ service: 'payments-api', force: true }, null, 2),
  risk: 'high',
  requester: { id: 'U0ALICE', name: 'Alice' },
  whoMayApprove: 'an approver other than the requester',
  approverIds: ['U0APPROVER', 'U0BOSS'],
  expiresAt: new Date('2026-11-20T12:30:00Z'),
};

interface Block {
  type?: unknown;
  elements?: Block[];
  text?: { text?: string };
  confirm?: unknown;
  [key: string]: unknown;
}

describe('renderApprovalCard', () => {
  it('shows what will run, risk, requester, approvers and expiry, with Approve and Reject', () => {
    const { text, blocks } = renderApprovalCard(card);
    expect(text).toBe('Approval needed: restart_service: Restart the payments-api service in production');
    const all = JSON.stringify(blocks);
    expect(all).toContain('restart_service');
    expect(all).toContain('payments-api');
    expect(all).toContain('```\\n{\\n  \\"service\\": \\"payments-api\\"');
    expect(all).toContain('<@U0ALICE>');
    expect(all).toContain('<@U0APPROVER>, <@U0BOSS>');
    expect(all).toContain(`<!date^${Date.parse('2026-11-20T12:30:00Z') / 1000}^`);
    expect(all).toContain('High');
    const actions = blocks.find((block: Block) => block.type === 'actions') as Block;
    const [approve, reject] = actions.elements ?? [];
    expect(approve).toMatchObject({ action_id: 'butler_approve', style: 'primary', value: card.approvalId });
    expect(reject).toMatchObject({ action_id: 'butler_reject', style: 'danger', value: card.approvalId });
    expect(approve?.confirm).toMatchObject({ title: { type: 'plain_text' }, confirm: { text: 'Approve' } });
    expect(reject?.confirm).toBeUndefined();
  });

  it('asks for confirmation only for high risk', () => {
    const actions = renderApprovalCard({ ...card, risk: 'medium' }).blocks.find(
      (b: Block) => b.type === 'actions',
    ) as Block;
    expect(actions.elements?.[0]?.confirm).toBeUndefined();
  });

  it('shows the outcome and no buttons once decided', () => {
    const approved = renderApprovalCard({
      ...card,
      status: 'approved',
      decidedBy: { id: 'U0APPROVER', name: 'Ana' },
      decidedAt: new Date('2026-11-20T12:03:00Z'),
    });
    expect(approved.blocks.some((block: Block) => block.type === 'actions')).toBe(false);
    expect(JSON.stringify(approved.blocks)).toContain('Approved by Ana at 12:03 UTC');
    expect(approved.text).toBe('restart_service: Approved by Ana at 12:03 UTC');
    const rejected = renderApprovalCard({
      ...card,
      status: 'rejected',
      decidedBy: { id: 'U0B', name: 'Bo' },
      reason: 'not <now>',
    });
    expect(JSON.stringify(rejected.blocks)).toContain('Rejected by Bo: not &lt;now&gt;');
    const expired = renderApprovalCard({ ...card, status: 'expired' });
    expect(JSON.stringify(expired.blocks)).toContain('Expired');
    expect(expired.blocks.some((block: Block) => block.type === 'actions')).toBe(false);
  });

  it('stays within Block Kit limits for huge inputs', () => {
    const huge: ApprovalCard = {
      ...card,
      toolName: 't'.repeat(64),
      summary: 'word '.repeat(2000),
      argumentsJson: `{"a":"${'<&>'.repeat(3000)}\`\`\`"}`,
      whoMayApprove: 'x'.repeat(5000),
      approverIds: Array.from({ length: 200 }, (_, index) => `U${index}`),
    };
    for (const status of ['pending', 'approved', 'rejected'] as const) {
      const { text, blocks } = renderApprovalCard({ ...huge, status, reason: 'r'.repeat(5000) });
      expect(blockKitViolations(blocks)).toEqual([]);
      expect(text.length).toBeLessThanOrEqual(blockLimits.notificationText);
    }
    const code = String((renderApprovalCard(huge).blocks[1] as Block).text?.text);
    expect(code.startsWith('```\n')).toBe(true);
    expect(code.endsWith('\n```')).toBe(true);
    expect(code.slice(4, -4)).not.toContain('```');
  });
});

describe('clicks and the reject-reason modal', () => {
  it('reads approval id and clicking user from block_actions', () => {
    const body = blockActions({
      approvalId: card.approvalId,
      actionId: 'butler_reject',
      messageTs: '1700.1',
      threadTs: '1699.1',
    });
    expect(parseCardClick(body)).toEqual({
      approvalId: card.approvalId,
      decision: 'reject',
      user: { id: 'U0APPROVER', name: 'approver' },
      channel: 'C0GENERAL',
      messageTs: '1700.1',
      threadTs: '1699.1',
      triggerId: '1337.42.abcdef',
    });
    expect(
      parseCardClick({
        type: 'block_actions',
        actions: [{ action_id: 'other', value: 'x' }],
        user: { id: 'U' },
      }),
    ).toBeUndefined();
  });

  it('round-trips the card location through the modal', () => {
    const context = {
      approvalId: card.approvalId,
      channel: 'C0GENERAL',
      messageTs: '1700.1',
      threadTs: '1699.1',
    };
    const view = renderRejectReasonView(context);
    expect(view).toMatchObject({ type: 'modal', callback_id: 'butler_reject_reason' });
    expect(String(view.private_metadata).length).toBeLessThanOrEqual(blockLimits.privateMetadata);
    const submission = rejectSubmission({ ...context, reason: '  not during the freeze ' });
    expect(JSON.parse(String(view.private_metadata))).toEqual(JSON.parse(submission.view.private_metadata));
    expect(parseRejectSubmission(submission)).toEqual({
      context,
      user: { id: 'U0APPROVER', name: 'approver' },
      reason: 'not during the freeze',
    });
    expect(parseRejectSubmission(rejectSubmission({ ...context }))?.reason).toBeUndefined();
  });
});
