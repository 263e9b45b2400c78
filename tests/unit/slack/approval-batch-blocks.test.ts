import { describe, expect, it } from 'vitest';
import { blockLimits, renderApprovalCard } from '../../../src/adapters/slack/approval-blocks.js';
import type { ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import { blockKitViolations } from '../../helpers/fake-slack-api.js';
import {
  actionsBlocks,
  approvalCard,
  type Block,
  batchId,
  deleteRecordCall,
  numberedCalls,
  restartCall,
  sectionTexts,
} from './approval-fixtures.js';

const rejectedCall: ApprovalCardCall = {
  ...restartCall,
  approvalId: '3f1c9a4e-1111-4c2b-9d7e-000000000003',
  toolName: 'notify_oncall',
  summary: 'Page the on-call engineer',
  risk: 'low',
  status: 'rejected',
  decidedBy: { id: 'U0B', name: 'Bo' },
  reason: 'not needed',
};

/** Every text object's characters: what Slack's message-size caps count. */
function totalText(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + totalText(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [key, item]) => sum + (key === 'text' && typeof item === 'string' ? item.length : totalText(item)),
    0,
  );
}

const ids = (blocks: Block[]) =>
  actionsBlocks(blocks).map((block) => [
    block.block_id,
    ...(block.elements ?? []).map((element) => element.action_id),
  ]);

describe('renderApprovalCard: several calls of one model step', () => {
  it('lists each call with its own buttons and offers Approve all / Reject all', () => {
    const card = approvalCard([restartCall, deleteRecordCall, rejectedCall], { standingApprovalHours: 8 });
    const { text, blocks } = renderApprovalCard(card);
    expect(text).toBe('Approval needed for 2 actions: restart_service, delete_record (MCP server records)');
    expect(blocks.map((block: Block) => block.type)).toEqual([
      'section',
      'section',
      'actions',
      'section',
      'actions',
      'section',
      'actions',
    ]);
    const [header, first, second, third] = sectionTexts(blocks);
    expect(header).toContain(':lock: *2 of 3 actions still need approval*');
    expect(header).toContain('Requested by <@U0ALICE>');
    expect(header).toContain(`<!date^${Date.parse('2026-11-20T12:30:00Z') / 1000}^`);
    expect(header).toContain('Approvers: <@U0APPROVER>, <@U0BOSS>');
    expect(first).toContain('*1.* `restart_service` · :warning: High');
    expect(first).toContain('Restart the payments-api service in production');
    // The summary leads the code block: the tool's words as they are, then the arguments.
    expect(first).toContain(
      '```\nRestart the payments-api service in production\n{\n  "service": "payments-api"',
    );
    expect(first).toContain('Who may approve: an approver other than the requester');
    expect(second).toContain('*2.* `records__delete_record` — delete_record on MCP server records · Medium');
    expect(third).toContain(':no_entry_sign: *Rejected by Bo: not needed*');
    expect(ids(blocks)).toEqual([
      ['butler_call_0', 'butler_approve', 'butler_reject', 'butler_approve_conversation'],
      ['butler_call_1', 'butler_approve', 'butler_reject', 'butler_approve_conversation'],
      ['butler_batch', 'butler_approve_all', 'butler_reject_all'],
    ]);
    const [own, , all] = actionsBlocks(blocks);
    for (const element of own?.elements ?? []) expect(element.value).toBe(restartCall.approvalId);
    expect(actionsBlocks(blocks)[1]?.elements?.[0]).toMatchObject({ value: deleteRecordCall.approvalId });
    expect(actionsBlocks(blocks)[1]?.elements?.[0]?.confirm).toBeUndefined();
    // The first call is high risk: its approve buttons, and "Approve all", ask first.
    expect(own?.elements?.[0]?.confirm).toBeDefined();
    expect(own?.elements?.[2]?.confirm).toBeDefined();
    const [approveAll, rejectAll] = all?.elements ?? [];
    expect(approveAll).toMatchObject({ style: 'primary', value: batchId, text: { text: 'Approve all' } });
    expect(JSON.stringify(approveAll?.confirm)).toContain('Butler will run 2 actions, 1 of them high risk');
    expect(rejectAll).toMatchObject({ style: 'danger', value: batchId, text: { text: 'Reject all' } });
    expect(rejectAll?.confirm).toBeUndefined();
  });

  it('says which specialist agent asks for each call, and for whom', () => {
    const card = approvalCard([
      { ...restartCall, agent: 'ops' },
      { ...deleteRecordCall, agent: 'docs' },
      deleteRecordCall,
    ]);
    const { text, blocks } = renderApprovalCard(card);
    const [, first, second, third] = sectionTexts(blocks);
    expect(first).toMatch(
      /^\*1\.\* `restart_service` · :warning: High\n:robot_face: Asked by the \*ops\* agent for <@U0ALICE>\n/,
    );
    expect(second).toContain('Asked by the *docs* agent for <@U0ALICE>');
    expect(third).not.toContain('Asked by');
    expect(text).toBe(
      'Approval needed for 3 actions: restart_service (asked by the ops agent), ' +
        'delete_record (MCP server records) (asked by the docs agent), delete_record (MCP server records)',
    );
    const done = renderApprovalCard(
      approvalCard(card.calls.map((call) => ({ ...call, status: 'expired' as const }))),
    );
    expect(done.text).toBe('3 tool calls (some asked by the ops and docs agents): 3 expired');
    const allOps = card.calls.map((call) => ({ ...call, agent: 'ops', status: 'expired' as const }));
    expect(renderApprovalCard(approvalCard(allOps)).text).toBe(
      '3 tool calls (asked by the ops agent): 3 expired',
    );
  });

  it('asks before "Approve all" only when a pending call is high risk', () => {
    const card = approvalCard([{ ...restartCall, status: 'rejected' }, ...numberedCalls(2)]);
    const all = actionsBlocks(renderApprovalCard(card).blocks).at(-1);
    expect(all?.block_id).toBe('butler_batch');
    expect(all?.elements?.[0]?.confirm).toBeUndefined();
  });

  it('drops "all" when one call is left, and every button once all are decided', () => {
    const approved = { ...restartCall, status: 'approved' as const, decidedBy: { id: 'U0ANA', name: 'Ana' } };
    const oneLeft = renderApprovalCard(approvalCard([approved, deleteRecordCall]));
    expect(ids(oneLeft.blocks)).toEqual([['butler_call_1', 'butler_approve', 'butler_reject']]);
    expect(sectionTexts(oneLeft.blocks)[0]).toContain('*1 of 2 actions still need approval*');

    const standing = { ...approved, standingUntil: new Date('2026-11-20T18:00:00Z') };
    const done = renderApprovalCard(
      approvalCard([standing, rejectedCall, { ...deleteRecordCall, status: 'expired' }]),
    );
    expect(actionsBlocks(done.blocks)).toEqual([]);
    const texts = sectionTexts(done.blocks);
    expect(texts[0]).toMatch(/^\*3 tool calls\*\nRequested by <@U0ALICE> · Expiry /);
    expect(texts[1]).toContain(
      `Approved for this conversation by Ana until <!date^${Date.parse('2026-11-20T18:00:00Z') / 1000}^`,
    );
    expect(texts[3]).toContain(':hourglass: *Expired');
    expect(done.text).toBe('3 tool calls: 1 approved, 1 rejected, 1 expired');
  });

  it('gives own buttons to the first ten calls only; the rest are decided with "all"', () => {
    const calls = numberedCalls(12);
    const { blocks } = renderApprovalCard(approvalCard(calls));
    expect(actionsBlocks(blocks).map((block) => block.block_id)).toEqual([
      ...Array.from({ length: 10 }, (_, index) => `butler_call_${index}`),
      'butler_batch',
    ]);
    expect(sectionTexts(blocks).at(-1)).toContain('Calls after the first 10 have no buttons of their own');
    expect(sectionTexts(blocks)).toContainEqual(expect.stringContaining('*12.* `records__delete_record`'));

    // Only the twelfth is left: without its own buttons, "all" is how to decide it.
    const decided = calls.map((call, index) =>
      index < 11 ? { ...call, status: 'rejected' as const } : call,
    );
    expect(ids(renderApprovalCard(approvalCard(decided)).blocks)).toEqual([
      ['butler_batch', 'butler_approve_all', 'butler_reject_all'],
    ]);
  });
});

describe('renderApprovalCard: Slack limits on large cards', () => {
  const longArguments = JSON.stringify(
    { query: `select * from customers where note like '%<&>\`\`\`%'`, rows: 'x'.repeat(1400) },
    null,
    2,
  ).slice(0, 1500);
  const heavy = (count: number) =>
    numberedCalls(count, {
      ...restartCall,
      origin: { kind: 'mcp', server: 'warehouse'.repeat(20), tool: 'run_query'.repeat(20) },
      summary: `Run a query on the warehouse ${'and more '.repeat(120)}`,
      argumentsJson: longArguments,
      whoMayApprove: 'an approver other than the requester '.repeat(10),
      agent: `ops <&> ${'o'.repeat(300)}`,
    }).map((call, index) =>
      index % 3 === 2
        ? {
            ...call,
            status: 'rejected' as const,
            decidedBy: { id: 'U0B', name: 'Bo' },
            reason: 'r'.repeat(500),
          }
        : call,
    );
  const approverIds = Array.from({ length: 200 }, (_, index) => `U${index}`);

  it.each([2, 10, 11, 12, 25, 37, 40, 60])('%i calls with long arguments fit one message', (count) => {
    const card = approvalCard(heavy(count), { approverIds, standingApprovalHours: 8 });
    const { text, blocks } = renderApprovalCard(card);
    expect(blockKitViolations(blocks)).toEqual([]);
    expect(blocks.length).toBeLessThanOrEqual(blockLimits.blocks);
    expect(totalText(blocks)).toBeLessThanOrEqual(blockLimits.messageText);
    expect(text.length).toBeLessThanOrEqual(blockLimits.notificationText);
    const actionIds = actionsBlocks(blocks).map((block) => block.block_id);
    expect(new Set(actionIds).size).toBe(actionIds.length);
    const calls = sectionTexts(blocks).filter((section) => /^\*\d+\.\*/.test(section));
    for (const section of calls) {
      // Every code block that was started is closed.
      expect((section.match(/```/g) ?? []).length % 2).toBe(0);
      expect(section).toContain('`restart_service`');
    }
    // Every call is on the card, or the card says how many are not.
    if (calls.length < count) {
      expect(sectionTexts(blocks).at(-1)).toContain(`${count - calls.length} more calls`);
    }
    // Each pending call of the first ten keeps its own buttons.
    const ownButtons = card.calls.slice(0, 10).filter((call) => call.status === 'pending').length;
    expect(actionIds.filter((id) => id?.startsWith('butler_call_'))).toHaveLength(ownButtons);
    expect(actionIds.at(-1)).toBe('butler_batch');
  });

  it('shows the arguments of a dozen calls, giving long ones what short ones leave', () => {
    const short = numberedCalls(11).map((call) => ({ ...call, argumentsJson: '{"id": 1}' }));
    const long = { ...deleteRecordCall, approvalId: 'long', argumentsJson: longArguments };
    const { blocks } = renderApprovalCard(approvalCard([...short, long]));
    const sections = sectionTexts(blocks).filter((section) => /^\*\d+\.\*/.test(section));
    expect(sections).toHaveLength(12);
    for (const section of sections) expect(section).toContain('```');
    const longCode = sections[11]?.split('```')[1] ?? '';
    expect(longCode.length).toBeGreaterThan(1000);
  });
});
