import { describe, expect, it } from 'vitest';
import { maxArgumentsCards, renderArgumentsCards } from '../../../src/adapters/feishu/arguments-cards.js';
import type { ApprovalDetails } from '../../../src/core/contracts/approval-card.js';
import { cardBodyLimitBytes, markdownTableCount } from '../../helpers/fake-feishu-card-rules.js';

/** "Show all arguments" cards when the whole is more than one click may post. */

function details(services: string[]): ApprovalDetails {
  return {
    batchId: 'batch',
    address: { platform: 'feishu', workspace: 'tenant', channel: 'oc_chat', thread: 'om_root' },
    calls: services.map((service, index) => {
      const argumentsJson = JSON.stringify({ service }, null, 2);
      return {
        approvalId: `call-${index}`,
        status: 'pending',
        toolName: 'restart_service',
        summary: `Restart ${index}`,
        argumentsJson,
        argumentsLength: argumentsJson.length,
        argumentsCut: false,
        risk: 'high',
        whoMayApprove: 'an approver other than the requester',
      };
    }),
    requesters: [{ id: 'ou_alice' }],
    expiresAt: new Date('2026-11-20T12:30:00Z'),
  };
}

/** What a card's request body weighs: the card as a JSON string inside the JSON body. */
const bodyBytes = (card: unknown) => Buffer.byteLength(JSON.stringify({ content: JSON.stringify(card) }));

function code(cards: unknown[]): string {
  return cards
    .flatMap((card) => (card as { body: { elements: Array<{ content: string }> } }).body.elements)
    .map((element) => element.content)
    .join('\n')
    .match(/```json\n[\s\S]*?\n```/g)
    ?.map((block) => block.slice(8, -4).replace(/\u200b/g, ''))
    .join('') as string;
}

describe('Show all arguments cards', () => {
  it('fill at most ten cards under 30 KB each, then count exactly what they left out', () => {
    // Quotes and backslashes take four bytes each in the body, pipes and dashes could make tables outside code.
    const services = Array.from({ length: 60 }, (_, index) => `${index}:${'"\\|-'.repeat(2_000)}`);
    const request = details(services);
    const cards = renderArgumentsCards(request);
    expect(cards).toHaveLength(maxArgumentsCards);
    for (const card of cards) {
      expect(bodyBytes(card)).toBeLessThanOrEqual(cardBodyLimitBytes);
      expect(markdownTableCount(JSON.stringify(card))).toBe(0);
    }
    const shown = code(cards);
    const whole = request.calls.map((call) => call.argumentsJson).join('');
    expect(whole.startsWith(shown)).toBe(true);

    const last = cards.at(-1) as { body: { elements: Array<{ content: string }> } };
    const note = last.body.elements.at(-1)?.content ?? '';
    const [, more, call, from, to, rest] =
      /^\*\*Not sent here:\*\* ([\d,]+) more characters of call (\d+) and calls (\d+)–(\d+) \(([\d,]+) characters\)\. /.exec(
        note,
      ) ?? [];
    const number = (text: string | undefined) => Number(text?.replace(/,/g, ''));
    const cutCall = number(call) - 1;
    const before = request.calls.slice(0, cutCall).reduce((sum, each) => sum + each.argumentsLength, 0);
    expect(number(more)).toBe((request.calls[cutCall]?.argumentsLength ?? 0) - (shown.length - before));
    expect([number(from), number(to)]).toEqual([cutCall + 2, 60]);
    expect(number(rest)).toBe(
      request.calls.slice(cutCall + 1).reduce((sum, each) => sum + each.argumentsLength, 0),
    );
    expect(note).toContain("Butler's admin console");
  });

  it('fit a short request in one card', () => {
    const cards = renderArgumentsCards(details(['payments-api']));
    expect(cards).toHaveLength(1);
    expect(code(cards)).toBe(JSON.stringify({ service: 'payments-api' }, null, 2));
  });
});
