import type { ApprovalCard, ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';

/** Neutral approval cards as the core builds them, for the Slack renderer and click tests. */

/** A call's arguments as the core puts them on a card that has room for all of them. */
export function wholeArguments(
  value: unknown,
): Pick<ApprovalCardCall, 'argumentsJson' | 'argumentsLength' | 'argumentsCut'> {
  const argumentsJson = JSON.stringify(value, null, 2);
  return { argumentsJson, argumentsLength: argumentsJson.length, argumentsCut: false };
}

export const restartCall: ApprovalCardCall = {
  approvalId: '3f1c9a4e-1111-4c2b-9d7e-000000000001',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart the payments-api service in production',
  ...wholeArguments({ service: 'payments-api', force: true }),
  risk: 'high',
  whoMayApprove: 'an approver other than the requester',
};

export const deleteRecordCall: ApprovalCardCall = {
  approvalId: '3f1c9a4e-1111-4c2b-9d7e-000000000002',
  status: 'pending',
  toolName: 'records__delete_record',
  origin: { kind: 'mcp', server: 'records', tool: 'delete_record' },
  summary: 'Delete record 42 from the customers table',
  ...wholeArguments({ table: 'customers', id: 42 }),
  risk: 'medium',
  whoMayApprove: 'the requester or an approver',
};

export const batchId = '9b2d7c1e-2222-4c2b-9d7e-00000000000b';

/** A card of `calls` (one model step), pending for half an hour. */
export function approvalCard(calls: ApprovalCardCall[], overrides: Partial<ApprovalCard> = {}): ApprovalCard {
  return {
    batchId,
    calls,
    requesters: [{ id: 'U0ALICE', name: 'Alice' }],
    approverIds: ['U0APPROVER', 'U0BOSS'],
    expiresAt: new Date('2026-11-20T12:30:00Z'),
    ...overrides,
  };
}

/** `count` distinct calls, numbered from 1, built from `base`. */
export function numberedCalls(count: number, base: ApprovalCardCall = deleteRecordCall): ApprovalCardCall[] {
  return Array.from({ length: count }, (_, index) => ({
    ...base,
    approvalId: `3f1c9a4e-1111-4c2b-9d7e-${String(index + 100).padStart(12, '0')}`,
    summary: `${base.summary} (#${index + 1})`,
  }));
}

export interface Block {
  type?: unknown;
  block_id?: string;
  elements?: Block[];
  text?: { text?: string };
  confirm?: unknown;
  [key: string]: unknown;
}

export const actionsBlocks = (blocks: Block[]) => blocks.filter((block) => block.type === 'actions');
export const sectionTexts = (blocks: Block[]) =>
  blocks.filter((block) => block.type === 'section' && block.text).map((block) => String(block.text?.text));
