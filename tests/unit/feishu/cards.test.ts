import { describe, expect, it } from 'vitest';
import { renderApprovalCard } from '../../../src/adapters/feishu/approval-card.js';
import { cardBodyBudgetBytes, cardBodyBytes } from '../../../src/adapters/feishu/card-limits.js';
import { toCardMarkdown } from '../../../src/adapters/feishu/markdown.js';
import { markdownCard, streamingCard } from '../../../src/adapters/feishu/reply-cards.js';
import { chooseCut, openFenceAt, renderSlice } from '../../../src/adapters/feishu/text-layout.js';
import type { ApprovalCard, ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';

const baseCall: ApprovalCardCall = {
  approvalId: 'appr_1',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart the payments service in production',
  argumentsJson: '{\n  "service": "payments"\n}',
  argumentsLength: 27,
  argumentsCut: false,
  risk: 'high',
  whoMayApprove: 'an approver other than the requester',
};

const baseCard: ApprovalCard = {
  batchId: 'batch_1',
  calls: [baseCall],
  requesters: [{ id: 'ou_alice' }],
  approverIds: ['ou_approver1'],
  expiresAt: new Date('2026-12-01T12:30:00Z'),
};

/** A card of one call, changed as given. */
function single(call: Partial<ApprovalCardCall>, card: Partial<ApprovalCard> = {}): ApprovalCard {
  return { ...baseCard, ...card, calls: [{ ...baseCall, ...call }] };
}

/** A card of `count` calls: `delete_record` of the MCP server `records`, ids appr_0.. */
function several(
  count: number,
  call: (index: number) => Partial<ApprovalCardCall> = () => ({}),
): ApprovalCard {
  return {
    ...baseCard,
    standingApprovalHours: 8,
    calls: Array.from({ length: count }, (_, index) => ({
      ...baseCall,
      approvalId: `appr_${index}`,
      toolName: 'records__delete_record',
      origin: { kind: 'mcp', server: 'records', tool: 'delete_record' },
      summary: `Delete record ${index}`,
      argumentsJson: `{\n  "id": ${index}\n}`,
      ...call(index),
    })),
  };
}

type Json = Record<string, unknown>;
const elements = (card: Json) => ((card.body as Json).elements as Json[]) ?? [];
const buttons = (card: Json): Json[] =>
  elements(card)
    .filter((element) => element.tag === 'column_set')
    .flatMap((set) => (set.columns as Json[]).flatMap((column) => column.elements as Json[]));
const buttonById = (card: Json, id: string) => buttons(card).find((button) => button.element_id === id);
/** What the card's markdown elements say, unescaped from JSON. */
const markdownText = (card: Json) =>
  elements(card)
    .filter((element) => element.tag === 'markdown')
    .map((element) => String(element.content))
    .join('\n');
const callbackValue = (button: Json | undefined) => (button?.behaviors as Json[] | undefined)?.[0]?.value;

/** Element ids: unique, at most 20 characters, a letter first, then letters, digits and underscores. */
function expectValidElementIds(card: Json) {
  const ids = [...JSON.stringify(card).matchAll(/"element_id":"([^"]*)"/g)].map((match) => match[1] ?? '');
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,19}$/);
  return ids;
}

describe('Feishu approval card of one call', () => {
  it('renders a pending high-risk card as JSON 2.0 with confirm on Approve', () => {
    const card = renderApprovalCard(baseCard);
    expect(card).toMatchObject({
      schema: '2.0',
      config: { update_multi: true },
      header: { template: 'red', title: { content: 'Approval needed: restart_service' } },
    });
    const [approve, reject, ...others] = buttons(card);
    expect(others).toEqual([]);
    expect(approve).toMatchObject({
      tag: 'button',
      type: 'primary_filled',
      behaviors: [{ type: 'callback', value: { approval_id: 'appr_1', decision: 'approve' } }],
    });
    expect(approve?.confirm).toBeDefined();
    expect(reject).toMatchObject({
      type: 'danger',
      behaviors: [{ type: 'callback', value: { approval_id: 'appr_1', decision: 'reject' } }],
    });
    expect(reject?.confirm).toBeUndefined();
    const text = JSON.stringify(card);
    for (const expected of [
      'restart_service',
      'Restart the payments service',
      'payments',
      '<at id=ou_alice></at>',
      '<at id=ou_approver1></at>',
      '2026-12-01 12:30 UTC',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('MCP server');
    expect(expectValidElementIds(card)).toEqual(['approve_0', 'reject_0']);
  });

  it('says which specialist agent asks, and for whom, in the card and its summary', () => {
    const card = renderApprovalCard(single({ agent: 'ops' }));
    expect(markdownText(card)).toContain(
      '**Tool:** `restart_service`\nAsked by the **ops** agent for <at id=ou_alice></at>\n**Requested by:**',
    );
    expect(card).toMatchObject({
      config: { summary: { content: 'Approval needed: restart_service (asked by the ops agent)' } },
      header: { title: { content: 'Approval needed: restart_service' } },
    });
    const named = renderApprovalCard(
      single({ agent: 'o*p*s <at id=all>' }, { requesters: [{ id: 'x', name: 'Alice' }] }),
    );
    expect(markdownText(named)).toContain(
      'Asked by the **o&#42;p&#42;s &#60;at id=all&#62;** agent for Alice',
    );
    // Butler's own calls say nothing of agents.
    const own = renderApprovalCard(baseCard);
    expect(JSON.stringify(own)).not.toContain('agent');
    expect(own).toMatchObject({ config: { summary: { content: 'Approval needed: restart_service' } } });
  });

  it('colours by risk and confirms only high risk', () => {
    const medium = renderApprovalCard(single({ risk: 'medium' }, { standingApprovalHours: 8 }));
    expect(medium).toMatchObject({ header: { template: 'orange' } });
    expect(buttons(medium).map((button) => button.confirm)).toEqual([undefined, undefined, undefined]);
  });

  it('shows where the tool comes from and offers approval for the conversation', () => {
    const card = renderApprovalCard(
      single(
        {
          toolName: 'records__delete_record',
          origin: { kind: 'mcp', server: 'records', tool: 'delete_record' },
        },
        { standingApprovalHours: 8 },
      ),
    );
    expect(card).toMatchObject({
      header: { title: { content: 'Approval needed: delete_record (MCP server records)' } },
    });
    expect(JSON.stringify(card)).toContain('**Tool:** `delete_record` (MCP server records)');
    const standing = buttonById(card, 'standing_0');
    expect(standing).toMatchObject({
      tag: 'button',
      text: { tag: 'plain_text', content: 'Approve for this conversation (8 h)' },
    });
    expect(callbackValue(standing)).toEqual({ approval_id: 'appr_1', decision: 'approve_for_conversation' });
    // High risk: a standing approval covers later calls by anyone here, so it asks first.
    expect(standing?.confirm).toBeDefined();
    expect(expectValidElementIds(card)).toEqual(['approve_0', 'reject_0', 'standing_0']);
    // Off (0 hours, or absent): no third button.
    expect(
      buttonById(renderApprovalCard(single({}, { standingApprovalHours: 0 })), 'standing_0'),
    ).toBeUndefined();
  });

  it('shows the outcome without buttons once decided', () => {
    const approved = renderApprovalCard(
      single(
        {
          status: 'approved',
          decidedBy: { id: 'ou_approver1' },
          decidedAt: new Date('2026-12-01T12:03:00Z'),
        },
        { standingApprovalHours: 8 },
      ),
    );
    expect(buttons(approved)).toEqual([]);
    expect(approved).toMatchObject({ header: { template: 'green' } });
    expect(JSON.stringify(approved)).toContain(
      'Approved by <at id=ou_approver1></at> at 2026-12-01 12:03 UTC',
    );
    expect(JSON.stringify(approved)).not.toContain('Expires');
    const standing = renderApprovalCard(
      single({
        status: 'approved',
        decidedBy: { id: 'ou_approver1', name: 'Olga' },
        standingUntil: new Date('2026-12-01T18:00:00Z'),
      }),
    );
    expect(JSON.stringify(standing)).toContain(
      'Approved for this conversation by Olga until 2026-12-01 18:00 UTC',
    );
    const rejected = renderApprovalCard(
      single({ status: 'rejected', decidedBy: { id: 'ou_x', name: '<at id=all>' }, reason: 'not *now*' }),
    );
    expect(JSON.stringify(rejected)).toContain('Rejected by &#60;at id=all&#62;: not &#42;now&#42;');
    expect(JSON.stringify(renderApprovalCard(single({ status: 'expired' })))).toContain('Expired');
  });

  it('stays within the 30 KB card limit with huge inputs', () => {
    const card = renderApprovalCard(
      single(
        {
          summary: '长'.repeat(20_000),
          argumentsJson: `{"x":"${'```'.repeat(5000)}"}`,
          argumentsLength: 15_008,
          whoMayApprove: 'an approver',
        },
        { approverIds: Array.from({ length: 500 }, (_, index) => `ou_approver_${index}`) },
      ),
    );
    expect(Buffer.byteLength(JSON.stringify(card))).toBeLessThan(30_000);
    const argumentsElement = String(elements(card)[1]?.content);
    const [, code, cut] = /^\*\*Arguments\*\*\n```json\n([\s\S]*)\n```\n(.*)$/.exec(argumentsElement) ?? [];
    expect(code).not.toContain('``');
    expect(cut).toBe(
      `*… (${(15_008 - (code ?? '').replace(/\u200b/g, '').length + 1).toLocaleString('en-US')} more characters)*`,
    );
  });
});

describe('Feishu approval card of several calls', () => {
  it('lists every call with its own buttons, and Approve all / Reject all', () => {
    const card = renderApprovalCard(several(3, (index) => (index === 2 ? { risk: 'medium' } : {})));
    expect(card).toMatchObject({
      schema: '2.0',
      header: {
        title: { content: '3 actions need approval' },
        subtitle: { content: 'up to high risk' },
        template: 'red',
      },
    });
    for (const expected of [
      '`delete_record` (MCP server records)',
      'Delete record 2',
      '"id": 1',
      'medium risk',
    ])
      expect(markdownText(card)).toContain(expected);
    expect(expectValidElementIds(card)).toEqual([
      'approve_0',
      'reject_0',
      'standing_0',
      'approve_1',
      'reject_1',
      'standing_1',
      'approve_2',
      'reject_2',
      'standing_2',
      'approve_all',
      'reject_all',
    ]);
    expect(callbackValue(buttonById(card, 'reject_1'))).toEqual({
      approval_id: 'appr_1',
      decision: 'reject',
    });
    expect(callbackValue(buttonById(card, 'standing_2'))).toEqual({
      approval_id: 'appr_2',
      decision: 'approve_for_conversation',
    });
    expect(buttonById(card, 'standing_2')?.confirm).toBeUndefined();
    const approveAll = buttonById(card, 'approve_all');
    expect(callbackValue(approveAll)).toEqual({ batch_id: 'batch_1', decision: 'approve' });
    expect(approveAll?.confirm).toBeDefined();
    expect(callbackValue(buttonById(card, 'reject_all'))).toEqual({
      batch_id: 'batch_1',
      decision: 'reject',
    });
    expect(buttonById(card, 'reject_all')?.confirm).toBeUndefined();
    // Nothing high risk: Approve all asks nothing.
    expect(
      buttonById(renderApprovalCard(several(2, () => ({ risk: 'low' }))), 'approve_all')?.confirm,
    ).toBeUndefined();
  });

  it('says which specialist agent asks for each call, and for whom', () => {
    const agents = ['ops', 'docs', undefined];
    const card = renderApprovalCard(
      several(3, (index) => {
        const agent = agents[index];
        return agent ? { agent } : {};
      }),
    );
    const calls = elements(card)
      .filter((element) => element.tag === 'markdown')
      .map((element) => String(element.content));
    expect(calls[0]).toMatch(
      /^\*\*1\.\*\* `delete_record` \(MCP server records\) · high risk\nAsked by the \*\*ops\*\* agent for <at id=ou_alice><\/at>\nDelete record 0/,
    );
    expect(calls[1]).toContain('Asked by the **docs** agent for <at id=ou_alice></at>');
    expect(calls[2]).not.toContain('Asked by');
    expect(card).toMatchObject({
      config: { summary: { content: '3 actions need approval (some asked by the ops and docs agents)' } },
      header: { title: { content: '3 actions need approval' } },
    });
    expect(renderApprovalCard(several(2, () => ({ agent: 'ops' })))).toMatchObject({
      config: { summary: { content: '2 actions need approval (asked by the ops agent)' } },
    });
  });

  it('shows decided calls with their outcome and drops the all buttons below two pending', () => {
    const decided = {
      decidedBy: { id: 'ou_approver1', name: 'Olga' },
      decidedAt: new Date('2026-12-01T12:03:00Z'),
    };
    const partly = renderApprovalCard(
      several(3, (index) =>
        index === 0
          ? { status: 'approved', ...decided }
          : index === 1
            ? { status: 'rejected', ...decided }
            : {},
      ),
    );
    expect(partly).toMatchObject({ header: { title: { content: '1 of 3 actions need approval' } } });
    expect(JSON.stringify(partly)).toContain('Approved by Olga at 2026-12-01 12:03 UTC');
    expect(JSON.stringify(partly)).toContain('Rejected by Olga');
    expect(expectValidElementIds(partly)).toEqual(['approve_2', 'reject_2', 'standing_2']);

    const done = renderApprovalCard(
      several(2, (index) => ({ status: index === 0 ? 'approved' : 'rejected', ...decided })),
    );
    expect(buttons(done)).toEqual([]);
    expect(done).toMatchObject({
      header: { title: { content: '2 actions: 1 approved, 1 rejected' }, template: 'green' },
    });
    const allRejected = renderApprovalCard(several(2, () => ({ status: 'rejected', ...decided })));
    expect(allRejected).toMatchObject({
      header: { title: { content: 'Rejected: 2 actions' }, template: 'grey' },
    });
  });

  it('gives own buttons to the first ten calls only; the rest are decided with the all buttons', () => {
    const card = renderApprovalCard(several(12));
    const ids = expectValidElementIds(card);
    expect(ids.filter((id) => id.startsWith('approve_'))).toEqual([
      ...Array.from({ length: 10 }, (_, index) => `approve_${index}`),
      'approve_all',
    ]);
    expect(JSON.stringify(card)).toContain('Delete record 11');
    // Only call 11 is left, and it has no buttons of its own: the all buttons stay.
    const lastLeft = renderApprovalCard(
      several(12, (index) => (index < 11 ? { status: 'approved', decidedBy: { id: 'ou_approver1' } } : {})),
    );
    expect(expectValidElementIds(lastLeft)).toEqual(['approve_all', 'reject_all']);
  });

  it('stays well under 30 KB with many calls and long arguments', () => {
    for (const count of [2, 10, 15, 40, 120]) {
      const card = renderApprovalCard(
        several(count, (index) => ({
          summary: `Delete record ${index}: ${'长'.repeat(3_000)}`,
          agent: `ops ${'长'.repeat(500)}`,
          argumentsJson: `{"text":"${'<b>"长"</b>`'.repeat(400)}"}`,
          whoMayApprove:
            index % 2 === 0 ? 'an approver other than the requester' : 'the requester or an approver',
        })),
      );
      expect(cardBodyBytes(card)).toBeLessThanOrEqual(cardBodyBudgetBytes);
      expectValidElementIds(card);
      // Decidable to the end: every pending call has its own buttons or the all buttons are there.
      expect(buttonById(card, 'approve_all')).toBeDefined();
      expect(markdownText(card)).toContain('Delete record 0:');
      if (count <= 15) expect(markdownText(card)).toContain(`Delete record ${count - 1}:`);
    }
    // Short calls keep their arguments, even on a card of fifteen.
    expect(markdownText(renderApprovalCard(several(15)))).toContain('"id": 14');
  });
});

describe('card markdown conversion', () => {
  it('demotes headings, turns images into links and task boxes into symbols', () => {
    expect(toCardMarkdown('# Title\n## Part\n### Detail')).toBe('#### Title\n#### Part\n##### Detail');
    expect(toCardMarkdown('see ![graph](https://x.example/g.png)')).toBe(
      'see [graph](https://x.example/g.png)',
    );
    expect(toCardMarkdown('- [ ] todo\n- [x] done')).toBe('- ☐ todo\n- ☑ done');
    expect(toCardMarkdown('***')).toBe('---');
  });

  it('escapes card tags outside code and leaves code alone', () => {
    expect(toCardMarkdown('hi <at id=all></at> and `a<b`')).toBe('hi &#60;at id=all>&#60;/at> and `a<b`');
    const code = '```html\n<div># not a heading</div>\n```';
    expect(toCardMarkdown(code)).toBe(code);
    expect(toCardMarkdown('**bold** _it_ [link](https://a.example) > quote')).toBe(
      '**bold** _it_ [link](https://a.example) > quote',
    );
  });

  it('never lets an @all or @someone tag live, in prose, inline code or code blocks', () => {
    // What a model (or text it was fed) could write to ping a whole group.
    const attempts = [
      '<at id=all></at>',
      '<at user_id="all">everyone</at>',
      '< at id="ou_boss"></at>',
      '<AT email=boss@example.com></AT>',
    ];
    for (const attempt of attempts) {
      for (const markdown of [attempt, `\`${attempt}\``, `\`\`\`\n${attempt}\n\`\`\``]) {
        expect(toCardMarkdown(markdown)).not.toMatch(/<\s*at[\s>]/i);
      }
    }
    const card = renderApprovalCard(
      single({ argumentsJson: '{\n  "note": "<at id=all></at> deploy done"\n}' }),
    );
    const argumentsText = String(
      elements(card).find((element) => String(element.content ?? '').includes('deploy done'))?.content,
    );
    expect(argumentsText).toContain('at id=all');
    expect(argumentsText).not.toMatch(/<\s*at[\s>]/i);
  });
});

describe('reply cards and layout', () => {
  it('builds the CardKit streaming card and the fallback card', () => {
    expect(streamingCard('hi')).toMatchObject({
      schema: '2.0',
      config: { streaming_mode: true },
      body: { elements: [{ tag: 'markdown', element_id: 'reply', content: 'hi' }] },
    });
    expect(markdownCard('')).toMatchObject({
      config: { update_multi: true },
      body: { elements: [{ content: '…' }] },
    });
  });

  it('reopens and closes code blocks cut between cards', () => {
    const text = 'intro\n```ts\nconst a = 1;\nconst b = 2;\n```\nafter';
    const cut = text.indexOf('const b');
    expect(openFenceAt(text.slice(0, cut))).toBe('```ts');
    expect(renderSlice(text, 0, cut)).toBe('intro\n```ts\nconst a = 1;\n```');
    expect(renderSlice(text, cut, text.length)).toBe('```ts\nconst b = 2;\n```\nafter');
  });

  it('cuts at paragraph boundaries within the byte budget, never inside a surrogate pair', () => {
    const text = `${'a'.repeat(50)}\n\n${'b'.repeat(50)}\n\n${'c'.repeat(50)}`;
    const within = (bytes: number) => (rendered: string) => Buffer.byteLength(rendered) <= bytes;
    expect(chooseCut(text, 0, within(120))).toBe(104);
    const emoji = '😀'.repeat(100);
    const cut = chooseCut(emoji, 0, within(41));
    expect(cut % 2).toBe(0);
    expect(Buffer.byteLength(renderSlice(emoji, 0, cut))).toBeLessThanOrEqual(41);
  });
});
