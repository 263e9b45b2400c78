import { describe, expect, it } from 'vitest';
import {
  blockLimits,
  renderApprovalCard,
  renderRejectReasonView,
} from '../../../src/adapters/slack/approval-blocks.js';
import { parseCardClick, parseRejectSubmission } from '../../../src/adapters/slack/interactions.js';
import { blockKitViolations } from '../../helpers/fake-slack-api.js';
import {
  actionsBlocks,
  approvalCard,
  type Block,
  batchId,
  deleteRecordCall,
  restartCall,
  sectionTexts,
} from './approval-fixtures.js';
import { blockActions, type CardActionId, rejectSubmission } from './payloads.js';

const card = approvalCard([restartCall]);

describe('renderApprovalCard: one call', () => {
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
    expect(blocks.map((block: Block) => block.type)).toEqual([
      'section',
      'section',
      'section',
      'section',
      'actions',
    ]);
    // The summary is the tool's words, shown as plain text: no `*bold*` or `<!channel>` comes alive.
    expect(blocks[1]).toEqual({
      type: 'section',
      text: { type: 'plain_text', text: 'Restart the payments-api service in production', emoji: true },
    });
    const [actions] = actionsBlocks(blocks);
    expect(actions?.block_id).toBe('butler_approval');
    expect(actions?.elements).toHaveLength(2);
    const [approve, reject] = actions?.elements ?? [];
    expect(approve).toMatchObject({
      action_id: 'butler_approve',
      style: 'primary',
      value: restartCall.approvalId,
    });
    expect(reject).toMatchObject({
      action_id: 'butler_reject',
      style: 'danger',
      value: restartCall.approvalId,
    });
    expect(approve?.confirm).toMatchObject({ title: { type: 'plain_text' }, confirm: { text: 'Approve' } });
    expect(reject?.confirm).toBeUndefined();
  });

  it('asks for confirmation only for high risk', () => {
    const [actions] = actionsBlocks(
      renderApprovalCard(approvalCard([{ ...restartCall, risk: 'medium' }])).blocks,
    );
    expect(actions?.elements?.[0]?.confirm).toBeUndefined();
  });

  it('names the MCP server a tool comes from', () => {
    const { blocks, text } = renderApprovalCard(approvalCard([deleteRecordCall]));
    expect(sectionTexts(blocks).slice(0, 2)).toEqual([
      ':lock: *Approval needed:* `records__delete_record` — delete_record on MCP server records',
      'Delete record 42 from the customers table',
    ]);
    expect(text).toBe('Approval needed: records__delete_record: Delete record 42 from the customers table');
    const builtin = renderApprovalCard(approvalCard([{ ...restartCall, origin: { kind: 'builtin' } }]));
    expect(sectionTexts(builtin.blocks)[0]).toBe(':lock: *Approval needed:* `restart_service`');
  });

  it('escapes what an MCP server calls its tool', () => {
    const origin = { kind: 'mcp' as const, server: '<!channel>', tool: `*bold* <@U0BOSS>${'x'.repeat(500)}` };
    const [heading] = sectionTexts(
      renderApprovalCard(approvalCard([{ ...deleteRecordCall, origin }])).blocks,
    );
    expect(heading).toContain('on MCP server &lt;!channel&gt;');
    expect(heading).not.toContain('<@U0BOSS>');
    expect(heading?.length).toBeLessThan(400);
  });

  it('says which specialist agent asks, and for whom', () => {
    const { text, blocks } = renderApprovalCard(approvalCard([{ ...restartCall, agent: 'ops' }]));
    expect(blocks.map((block: Block) => block.type)).toEqual([
      'section',
      'context',
      'section',
      'section',
      'section',
      'actions',
    ]);
    expect(blocks[1]).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: ':robot_face: Asked by the *ops* agent for <@U0ALICE>' }],
    });
    expect(text).toBe(
      'Approval needed: restart_service (asked by the ops agent): Restart the payments-api service in production',
    );
    const decided = renderApprovalCard(
      approvalCard([
        { ...restartCall, agent: 'ops', status: 'rejected', decidedBy: { id: 'U0B', name: 'Bo' } },
      ]),
    );
    expect(JSON.stringify(decided.blocks)).toContain('Asked by the *ops* agent for <@U0ALICE>');
    expect(decided.text).toBe('restart_service (asked by the ops agent): Rejected by Bo');
    // Butler's own calls say nothing of agents.
    expect(JSON.stringify(renderApprovalCard(card))).not.toContain('agent');
  });

  it('escapes the agent name', () => {
    const { text, blocks } = renderApprovalCard(
      approvalCard([{ ...restartCall, agent: `<!channel> <@U0BOSS>${'x'.repeat(500)}` }]),
    );
    const context = JSON.stringify(blocks[1]);
    expect(context).toContain('Asked by the *&lt;!channel&gt; &lt;@U0BOSS&gt;');
    expect(context).not.toContain('<!channel>');
    expect(context.length).toBeLessThan(400);
    expect(text).not.toContain('<!channel>');
    expect(blockKitViolations(blocks)).toEqual([]);
  });

  it('offers "Approve for this conversation" while standing approvals are on', () => {
    const standing = approvalCard([restartCall], { standingApprovalHours: 8 });
    const [actions] = actionsBlocks(renderApprovalCard(standing).blocks);
    const [approve, reject, conversation] = actions?.elements ?? [];
    expect(approve).toMatchObject({ action_id: 'butler_approve', value: restartCall.approvalId });
    expect(reject).toMatchObject({ action_id: 'butler_reject', value: restartCall.approvalId });
    expect(conversation).toMatchObject({
      action_id: 'butler_approve_conversation',
      text: { type: 'plain_text', text: 'Approve for this conversation (8 h)' },
      value: restartCall.approvalId,
    });
    // High risk: both approve buttons ask first; the standing one says it covers later calls.
    expect(JSON.stringify(conversation?.confirm)).toContain(
      'later calls in this conversation for the next 8 h',
    );
    const medium = renderApprovalCard(
      approvalCard([{ ...restartCall, risk: 'medium' }], { standingApprovalHours: 1.5 }),
    );
    const mediumButton = actionsBlocks(medium.blocks)[0]?.elements?.[2];
    expect(mediumButton?.text).toMatchObject({ text: 'Approve for this conversation (1.5 h)' });
    expect(mediumButton?.confirm).toBeUndefined();
    const off = renderApprovalCard(approvalCard([restartCall], { standingApprovalHours: 0 }));
    expect(actionsBlocks(off.blocks)[0]?.elements).toHaveLength(2);
  });

  it('shows the outcome and no buttons once decided', () => {
    const decided = (call: Partial<typeof restartCall>) =>
      renderApprovalCard(approvalCard([{ ...restartCall, ...call }], { standingApprovalHours: 8 }));
    const approved = decided({
      status: 'approved',
      decidedBy: { id: 'U0APPROVER', name: 'Ana' },
      decidedAt: new Date('2026-11-20T12:03:00Z'),
    });
    expect(actionsBlocks(approved.blocks)).toEqual([]);
    // Times show in each reader's own time zone (Slack's date token), with the date: grants last days.
    expect(JSON.stringify(approved.blocks)).toContain(
      `Approved by Ana at <!date^${Date.parse('2026-11-20T12:03:00Z') / 1000}^{date_short_pretty} {time}|2026-11-20 12:03 UTC>`,
    );
    expect(approved.text).toBe('restart_service: Approved by Ana at 2026-11-20 12:03 UTC');
    const standing = decided({
      status: 'approved',
      decidedBy: { id: 'U0APPROVER', name: 'Ana' },
      decidedAt: new Date('2026-11-20T10:00:00Z'),
      standingUntil: new Date('2026-11-20T18:00:00Z'),
    });
    expect(actionsBlocks(standing.blocks)).toEqual([]);
    expect(sectionTexts(standing.blocks).at(-1)).toBe(
      `:white_check_mark: *Approved for this conversation by Ana until <!date^${Date.parse('2026-11-20T18:00:00Z') / 1000}^{date_short_pretty} {time}|2026-11-20 18:00 UTC>*`,
    );
    const rejected = decided({
      status: 'rejected',
      decidedBy: { id: 'U0B', name: 'Bo' },
      reason: 'not <now>',
    });
    expect(JSON.stringify(rejected.blocks)).toContain('Rejected by Bo: not &lt;now&gt;');
    const expired = decided({ status: 'expired' });
    expect(JSON.stringify(expired.blocks)).toContain('Expired');
    expect(actionsBlocks(expired.blocks)).toEqual([]);
  });

  it('stays within Block Kit limits for huge inputs', () => {
    const huge = {
      ...restartCall,
      toolName: 't'.repeat(64),
      origin: { kind: 'mcp' as const, server: 's'.repeat(3000), tool: 't'.repeat(3000) },
      summary: 'word '.repeat(2000),
      argumentsJson: `{"a":"${'<&>'.repeat(3000)}\`\`\`"}`,
      argumentsLength: 9011,
      whoMayApprove: 'x'.repeat(5000),
      agent: 'a'.repeat(5000),
    };
    const approverIds = Array.from({ length: 200 }, (_, index) => `U${index}`);
    for (const status of ['pending', 'approved', 'rejected'] as const) {
      const { text, blocks } = renderApprovalCard(
        approvalCard([{ ...huge, status, reason: 'r'.repeat(5000) }], {
          approverIds,
          standingApprovalHours: 8,
        }),
      );
      expect(blockKitViolations(blocks)).toEqual([]);
      expect(text.length).toBeLessThanOrEqual(blockLimits.notificationText);
    }
    const code = sectionTexts(renderApprovalCard(approvalCard([huge])).blocks)[2] ?? '';
    expect(JSON.stringify(renderApprovalCard(approvalCard([huge])).blocks[1]).length).toBeLessThan(300);
    const [block = '', note] = code.split('\n```\n');
    expect(block.startsWith('```\n')).toBe(true);
    expect(block.slice(4)).not.toContain('```');
    // Cut between entities, never through one, and the note counts what the stored arguments lost.
    expect(block).toMatch(/(&lt;|&amp;|&gt;)$/);
    const shown = block.slice(4).replace(/&lt;|&gt;|&amp;/g, '.');
    const more = (huge.argumentsLength - shown.length).toLocaleString('en-US');
    expect(note).toBe(`_… ${more} more characters: Show all arguments has them all_`);
  });
});

describe('clicks and the reject-reason modal', () => {
  const where = { messageTs: '1700.1', threadTs: '1699.1' };
  const clicked = {
    user: { id: 'U0APPROVER', name: 'approver' },
    channel: 'C0GENERAL',
    messageTs: '1700.1',
    threadTs: '1699.1',
    triggerId: '1337.42.abcdef',
  };

  it.each<[CardActionId, Record<string, string>]>([
    ['butler_approve', { approvalId: restartCall.approvalId, decision: 'approve' }],
    ['butler_reject', { approvalId: restartCall.approvalId, decision: 'reject' }],
    [
      'butler_approve_conversation',
      { approvalId: restartCall.approvalId, decision: 'approve_for_conversation' },
    ],
    ['butler_approve_all', { batchId, decision: 'approve' }],
    ['butler_reject_all', { batchId, decision: 'reject' }],
  ])('reads %s as %o, with the clicking user from block_actions', (actionId, meaning) => {
    const target = actionId.endsWith('_all') ? { batchId } : { approvalId: restartCall.approvalId };
    expect(parseCardClick(blockActions({ ...target, actionId, ...where }))).toEqual({
      ...meaning,
      ...clicked,
    });
  });

  it('ignores other actions and clicks without a value', () => {
    const click = (action: Record<string, unknown>) =>
      parseCardClick({ type: 'block_actions', actions: [action], user: { id: 'U' } });
    expect(click({ action_id: 'other', value: 'x' })).toBeUndefined();
    expect(click({ action_id: 'toString', value: 'x' })).toBeUndefined();
    expect(click({ action_id: 'butler_approve_all' })).toBeUndefined();
  });

  it('round-trips the card location and the call through the modal', () => {
    const context = { approvalId: restartCall.approvalId, channel: 'C0GENERAL', ...where };
    const view = renderRejectReasonView(context);
    expect(view).toMatchObject({ type: 'modal', callback_id: 'butler_reject_reason' });
    expect(String(view?.private_metadata).length).toBeLessThanOrEqual(blockLimits.privateMetadata);
    const submission = rejectSubmission({ ...context, reason: '  not during the freeze ' });
    expect(JSON.parse(String(view?.private_metadata))).toEqual(JSON.parse(submission.view.private_metadata));
    expect(parseRejectSubmission(submission)).toEqual({
      context,
      user: { id: 'U0APPROVER', name: 'approver' },
      reason: 'not during the freeze',
    });
    expect(parseRejectSubmission(rejectSubmission({ ...context }))?.reason).toBeUndefined();
  });

  it('round-trips "Reject all" through the modal with the batch id', () => {
    const context = { batchId, channel: 'C0GENERAL', messageTs: '1700.1' };
    const view = renderRejectReasonView(context);
    expect(JSON.parse(String(view?.private_metadata))).toEqual(context);
    expect(view?.title).toMatchObject({ text: 'Reject all tool calls' });
    const submission = rejectSubmission({ ...context, reason: 'wrong table' });
    expect(JSON.parse(String(view?.private_metadata))).toEqual(JSON.parse(submission.view.private_metadata));
    expect(parseRejectSubmission(submission)).toEqual({
      context,
      user: { id: 'U0APPROVER', name: 'approver' },
      reason: 'wrong table',
    });
  });

  it('refuses modal metadata that names both targets or neither, and never writes metadata too long', () => {
    const both = rejectSubmission({ approvalId: restartCall.approvalId, batchId, messageTs: '1700.1' });
    expect(parseRejectSubmission(both)).toBeUndefined();
    expect(parseRejectSubmission(rejectSubmission({ messageTs: '1700.1' }))).toBeUndefined();
    const long = {
      approvalId: 'a'.repeat(2000),
      channel: 'C0GENERAL',
      messageTs: '1700.1',
      threadTs: 't'.repeat(1000),
    };
    expect(renderRejectReasonView(long)).toBeUndefined();
  });
});
