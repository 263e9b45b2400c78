import { describe, expect, it } from 'vitest';
import { renderApprovalCard } from '../../../src/adapters/feishu/approval-card.js';
import { argumentsMarkdown } from '../../../src/adapters/feishu/approval-markdown.js';
import { cardBodyBudgetBytes, cardBodyBytes } from '../../../src/adapters/feishu/card-limits.js';
import { markdownTables, tableCount } from '../../../src/adapters/feishu/markdown-tables.js';
import { replyCardBodyBytes, replyCardFits } from '../../../src/adapters/feishu/reply-cards.js';
import { chooseCut, renderSlice } from '../../../src/adapters/feishu/text-layout.js';
import {
  type ApprovalCard,
  type ApprovalCardCall,
  cardArgumentsLimit,
} from '../../../src/core/contracts/approval-card.js';
import { truncateText } from '../../../src/core/text/index.js';

/** Feishu's card limits as Butler applies them: the serialized request body, and five tables per card. */

const table = (label: string) => `| ${label} | status |\n|---|:---:|\n| api | ok |\n`;

describe('markdown tables', () => {
  it('counts GFM tables outside code blocks, and nothing that only looks like one', () => {
    expect(tableCount(table('a'))).toBe(1);
    expect(tableCount(`${table('a')}\n${table('b')}`)).toBe(2);
    expect(tableCount('service | status\n--- | ---\napi | ok')).toBe(1);
    expect(tableCount(`\`\`\`md\n${table('in code')}\`\`\``)).toBe(0);
    // A setext heading and rows without a delimiter row are not tables.
    expect(tableCount('service | status\n---')).toBe(0);
    expect(tableCount('| a | b |\n| 1 | 2 |')).toBe(0);
  });

  it('says where each table starts and ends, rows up to the next blank line', () => {
    const text = `Intro\n\n${table('a')}| more | rows |\n\nAfter`;
    const [span, ...more] = markdownTables(text);
    expect(more).toEqual([]);
    expect(text.slice(span?.start, span?.end)).toBe(`${table('a')}| more | rows |\n`);
  });
});

describe('reply cards at the limits', () => {
  it('measures the request body, where each quote and backslash takes four bytes', () => {
    expect(replyCardBodyBytes('"\\'.repeat(1_000))).toBeGreaterThan(8_000);
    expect(replyCardBodyBytes('ab'.repeat(1_000))).toBeLessThan(3_000);
  });

  it('fills a card with escape-heavy code up to the body budget, not the markdown size', () => {
    const code = `\`\`\`\n${'x = "\\"\\\\";\n'.repeat(3_000)}\`\`\``;
    const limits = { maxCardBodyBytes: cardBodyBudgetBytes, maxTablesPerCard: 5 };
    const cut = chooseCut(code, 0, (rendered) => replyCardFits(rendered, limits));
    const first = renderSlice(code, 0, cut);
    expect(replyCardBodyBytes(first)).toBeLessThanOrEqual(cardBodyBudgetBytes);
    expect(replyCardBodyBytes(first)).toBeGreaterThan(cardBodyBudgetBytes - 200);
    expect(code[cut - 1]).toBe('\n');
  });

  it('ends a card before the table that would be one too many, with the heading that introduces it', () => {
    const text = Array.from(
      { length: 7 },
      (_, index) => `#### Table ${index}\n\n${table(`t${index}`)}\n`,
    ).join('');
    const cut = chooseCut(text, 0, (rendered) => tableCount(rendered) <= 5);
    expect(tableCount(renderSlice(text, 0, cut))).toBe(5);
    expect(text.slice(cut)).toMatch(/^#### Table 5\n\n\| t5 \|/);
  });
});

/** A card of `count` calls whose arguments are quotes and backslashes, cut by the core as it cuts them. */
function escapeHeavyCard(count: number): ApprovalCard {
  const limit = Math.max(200, Math.floor(cardArgumentsLimit / count));
  return {
    batchId: 'batch_heavy',
    requesters: [{ id: 'ou_alice' }],
    approverIds: ['ou_approver1'],
    expiresAt: new Date('2026-12-01T12:30:00Z'),
    standingApprovalHours: 8,
    calls: Array.from({ length: count }, (_, index) => {
      const service = `${index}:${'"\\'.repeat(300)}`;
      const whole = JSON.stringify({ service }, null, 2);
      const shown = truncateText(whole, limit);
      return {
        approvalId: `appr_${index}`,
        status: 'pending',
        toolName: 'restart_service',
        summary: `Restart a production service (${truncateText(`service=${service}`, 200)})`,
        argumentsJson: shown,
        argumentsLength: whole.length,
        argumentsCut: shown !== whole,
        risk: 'high',
        whoMayApprove: 'an approver other than the requester',
      };
    }),
  };
}

describe('approval cards at the limits', () => {
  it.each([1, 8, 15, 20, 60])('keeps a card of %i escape-heavy calls within the body budget', (count) => {
    expect(cardBodyBytes(renderApprovalCard(escapeHeavyCard(count)))).toBeLessThanOrEqual(
      cardBodyBudgetBytes,
    );
  });

  it.each([15, 20, 60])('says what it left out of %i calls it had to shrink', (count) => {
    const text = JSON.stringify(renderApprovalCard(escapeHeavyCard(count)));
    expect(text).toMatch(
      /more characters\)\*|Arguments not shown \([\d,]+ characters\): the card has no room/,
    );
    if (count > 50) expect(text).toMatch(/…and \d+ more \(\d+ waiting\) that do not fit on the card/);
  });

  it('counts exactly what it cut from the stored arguments, also when the core cut them first', () => {
    const call = (argumentsJson: string, argumentsLength = argumentsJson.length) =>
      ({
        ...escapeHeavyCard(1).calls[0],
        argumentsJson,
        argumentsLength,
        argumentsCut: argumentsLength > argumentsJson.length,
      }) as ApprovalCardCall;
    expect(argumentsMarkdown(call('{"a":1}'), 100)).toBe('```json\n{"a":1}\n```');
    expect(argumentsMarkdown(call(`{"a":"${'x'.repeat(100)}"}`), 50)).toMatch(
      /…\n```\n\*… \(58 more characters\)\*$/,
    );
    // 199 characters of 12,345 came on the card; it shows 50 of them.
    expect(argumentsMarkdown(call(`${'y'.repeat(199)}…`, 12_345), 50)).toMatch(
      /\*… \(12,295 more characters\)\*$/,
    );
  });
});
