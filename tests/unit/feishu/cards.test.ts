import { describe, expect, it } from 'vitest';
import { renderApprovalCard } from '../../../src/adapters/feishu/approval-card.js';
import { toCardMarkdown } from '../../../src/adapters/feishu/markdown.js';
import { markdownCard, streamingCard } from '../../../src/adapters/feishu/reply-cards.js';
import { chooseCut, openFenceAt, renderSlice } from '../../../src/adapters/feishu/text-layout.js';
import type { ApprovalCard } from '../../../src/core/approval-card.js';

const baseCard: ApprovalCard = {
  approvalId: 'appr_1',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart the payments service in production',
  argumentsJson: '{\n  "service": "payments"\n}',
  risk: 'high',
  requester: { id: 'ou_alice' },
  whoMayApprove: 'an approver other than the requester',
  approverIds: ['ou_approver1'],
  expiresAt: new Date('2026-12-01T12:30:00Z'),
};

type Json = Record<string, unknown>;
const elements = (card: Json) => ((card.body as Json).elements as Json[]) ?? [];
const buttons = (card: Json): Json[] =>
  elements(card)
    .filter((element) => element.tag === 'column_set')
    .flatMap((set) => (set.columns as Json[]).flatMap((column) => column.elements as Json[]));

describe('Feishu approval card', () => {
  it('renders a pending high-risk card as JSON 2.0 with confirm on Approve', () => {
    const card = renderApprovalCard(baseCard);
    expect(card).toMatchObject({
      schema: '2.0',
      config: { update_multi: true },
      header: { template: 'red' },
    });
    const [approve, reject] = buttons(card);
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
    // Element ids: unique, at most 20 characters, letters first.
    const ids = JSON.stringify(card).match(/"element_id":"([^"]*)"/g) ?? [];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id.slice(14, -1)).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,19}$/);
  });

  it('colours by risk and confirms only high risk', () => {
    const medium = renderApprovalCard({ ...baseCard, risk: 'medium' });
    expect(medium).toMatchObject({ header: { template: 'orange' } });
    expect(buttons(medium)[0]?.confirm).toBeUndefined();
  });

  it('shows the outcome without buttons once decided', () => {
    const approved = renderApprovalCard({
      ...baseCard,
      status: 'approved',
      decidedBy: { id: 'ou_approver1' },
      decidedAt: new Date('2026-12-01T12:03:00Z'),
    });
    expect(buttons(approved)).toEqual([]);
    expect(approved).toMatchObject({ header: { template: 'green' } });
    expect(JSON.stringify(approved)).toContain('Approved by <at id=ou_approver1></at> at 12:03 UTC');
    const rejected = renderApprovalCard({
      ...baseCard,
      status: 'rejected',
      decidedBy: { id: 'ou_x', name: '<at id=all>' },
      reason: 'not *now*',
    });
    expect(JSON.stringify(rejected)).toContain('Rejected by &#60;at id=all&#62;: not &#42;now&#42;');
    expect(JSON.stringify(renderApprovalCard({ ...baseCard, status: 'expired' }))).toContain('Expired');
  });

  it('stays within the 30 KB card limit with huge inputs', () => {
    const card = renderApprovalCard({
      ...baseCard,
      summary: '长'.repeat(20_000),
      argumentsJson: `{"x":"${'```'.repeat(5000)}"}`,
      whoMayApprove: 'an approver',
      approverIds: Array.from({ length: 500 }, (_, index) => `ou_approver_${index}`),
    });
    expect(Buffer.byteLength(JSON.stringify(card))).toBeLessThan(30_000);
    const argumentsElement = String(elements(card)[1]?.content);
    expect(argumentsElement.startsWith('**Arguments**\n```json\n')).toBe(true);
    expect(argumentsElement.slice('**Arguments**\n```json\n'.length, -'\n```'.length)).not.toContain('``');
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
    expect(chooseCut(text, 0, 120)).toBe(104);
    const emoji = '😀'.repeat(100);
    const cut = chooseCut(emoji, 0, 41);
    expect(cut % 2).toBe(0);
    expect(Buffer.byteLength(renderSlice(emoji, 0, cut))).toBeLessThanOrEqual(41);
  });
});
