import { describe, expect, it } from 'vitest';
import { renderArgumentsView } from '../../../src/adapters/slack/arguments-view.js';
import type { ApprovalDetails } from '../../../src/core/contracts/approval-card.js';
import { blockKitViolations } from '../../helpers/fake-slack-api.js';
import { restartCall, wholeArguments } from './approval-fixtures.js';

/** The "Show all arguments" modal when the whole does not fit in Slack's 100 blocks. */

type Section = { type: string; text?: { text: string } };

/** The code of a section as stored: entities decoded, the zero-width space in backtick runs dropped. */
function code(section: Section): string {
  const text = section.text?.text ?? '';
  const start = text.indexOf('```\n');
  if (start === -1) return '';
  return text
    .slice(start + 4, text.lastIndexOf('\n```'))
    .replace(/`\u200b``/g, '```')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function details(services: string[]): ApprovalDetails {
  return {
    batchId: 'batch',
    address: { platform: 'slack', workspace: 'T0', channel: 'C0', thread: '1.0' },
    calls: services.map((service, index) => ({
      ...restartCall,
      approvalId: `call-${index}`,
      ...wholeArguments({ service }),
    })),
    requesters: [{ id: 'U0ALICE' }],
    expiresAt: new Date('2026-11-20T12:30:00Z'),
    link: 'https://butler.example.com/console#batch=batch',
  };
}

describe('the Show all arguments modal', () => {
  it('fills 100 blocks of at most 3,000 characters, then counts exactly what it left out', () => {
    // Entities and backtick runs make the escaped text longer than the stored one: the count is on the stored.
    const services = Array.from({ length: 60 }, (_, index) => `${index}:${'<&>```'.repeat(700)}`);
    const request = details(services);
    const view = renderArgumentsView(request) as { blocks: Section[]; title: { text: string } };
    expect(view.blocks).toHaveLength(100);
    expect(blockKitViolations(view.blocks, 100)).toEqual([]);

    // Stitch each call's code back together from its sections, in order.
    const shown: string[] = [];
    for (const section of view.blocks.slice(1, -1)) {
      if (/^\*\d+\.\*/.test(section.text?.text ?? '')) shown.push('');
      shown[shown.length - 1] += code(section);
    }
    const last = shown.length - 1;
    for (const [index, text] of shown.slice(0, last).entries())
      expect(text).toBe(request.calls[index]?.argumentsJson);
    const cutCall = request.calls[last]?.argumentsJson ?? '';
    expect(cutCall.startsWith(shown[last] ?? '')).toBe(true);

    const rest = request.calls.slice(last + 1).reduce((sum, call) => sum + call.argumentsLength, 0);
    const format = (count: number) => count.toLocaleString('en-US');
    expect(view.blocks.at(-1)?.text?.text).toBe(
      `*Not shown here:* ${format(cutCall.length - (shown[last]?.length ?? 0))} more characters of call ${last + 1} and calls ${last + 2}–60 (${format(rest)} characters). Read them whole in the <https://butler.example.com/console#batch=batch|admin console>.`,
    );
  });

  it('makes progress through a grapheme longer than a section', () => {
    const service = `e${'\u0301'.repeat(7000)}`;
    const view = renderArgumentsView(details([service])) as { blocks: Section[] };
    expect(blockKitViolations(view.blocks, 100)).toEqual([]);
    expect(view.blocks.slice(1).map(code).join('')).toBe(JSON.stringify({ service }, null, 2));
  });
});
