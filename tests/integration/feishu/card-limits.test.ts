import { describe, expect, it } from 'vitest';
import { toCardMarkdown } from '../../../src/adapters/feishu/markdown.js';
import type { RecordedCall } from '../../helpers/fake-feishu-api.js';
import { cardBodyLimitBytes, markdownTableCount } from '../../helpers/fake-feishu-card-rules.js';
import { waitFor } from '../../helpers/wait-for.js';
import { cardActionEvent, messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { approverOpenId, repliesTo, useFeishuButler } from './feishu-butler.js';

/**
 * Replies and approval cards that would break Feishu's card limits (a request body over 30 KB, more than 5
 * tables) arrive whole through the running Butler, against a fake that refuses what Feishu refuses.
 */

const publicUrl = 'https://butler.example.com';
const suite = useFeishuButler({
  env: { BUTLER_PUBLIC_URL: publicUrl },
  // The sweep re-posts a card not yet posted after six sweeps: on a loaded machine, a card of 60 calls
  // could be posted twice (and the first one's buttons then refused) with the tests' 200 ms sweeps.
  config: { worker: { sweepMilliseconds: 2_000 } },
});

/** Every call that sent, patched, created or updated a card since `start`. */
function cardCallsSince(start: number): RecordedCall[] {
  return suite.fake.calls.filter(
    (call) =>
      call.at >= start &&
      call.method !== 'GET' &&
      /^\/open-apis\/(im\/v1\/messages|cardkit\/v1\/cards)/.test(call.path) &&
      !call.path.includes('/reactions'),
  );
}

function expectEveryCardCallAccepted(start: number) {
  const calls = cardCallsSince(start);
  expect(calls.length).toBeGreaterThan(0);
  const refused = calls.filter((call) => call.code !== 0 || call.bytes > cardBodyLimitBytes);
  expect(refused.map((call) => `${call.method} ${call.path}: ${call.code}, ${call.bytes} bytes`)).toEqual([]);
}

function chunksOf(text: string, size: number): string[] {
  return Array.from({ length: Math.ceil(text.length / size) }, (_, index) =>
    text.slice(index * size, (index + 1) * size),
  );
}

async function ask(chatId = 'oc_group_chat'): Promise<string> {
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, chatId }));
  return messageId;
}

describe('Feishu card limits through the running Butler', () => {
  it('streams about 40 KB of quote- and backslash-heavy code whole, no card request over 30 KB', async () => {
    // Each `"` or `\` takes 2 bytes in a CardKit update and 4 in a card sent as message content.
    const line = (index: number) => String.raw`q${index} = "\"\\\"\\\\\"\\\"\\\"\\\\\"\\\"\\\"\\\"";`;
    const lines = Array.from({ length: 820 }, (_, index) => line(index));
    const text = `\`\`\`python\n${lines.join('\n')}\n\`\`\``;
    expect(text.length).toBeGreaterThan(40_000);
    const start = Date.now();
    suite.model.enqueue({ text, chunks: chunksOf(text, 1_000), chunkDelayMs: 15 });
    const messageId = await ask();
    await suite.app.settle(20_000);

    const cards = repliesTo(suite.fake, messageId).map((reply) => suite.fake.visibleText(reply.messageId));
    expect(cards.length).toBeGreaterThanOrEqual(2);
    // Each card reopens and closes the code block; between the fences, every line arrives once, in order.
    for (const card of cards) expect(card).toMatch(/^```python\n[\s\S]*\n```$/);
    expect(cards.flatMap((card) => card.split('\n').filter((each) => !each.startsWith('```')))).toEqual(
      lines,
    );
    expectEveryCardCallAccepted(start);
  });

  it('answers with seven tables in cards of at most five tables each, whole', async () => {
    const tables = Array.from(
      { length: 7 },
      (_, index) => `#### Region ${index + 1}\n\n| service | status |\n|---|---|\n| api-${index} | ok |\n\n`,
    );
    const text = `Status by region:\n\n${tables.join('')}All regions checked.`;
    const start = Date.now();
    suite.model.enqueue({ text, chunks: chunksOf(text, 60), chunkDelayMs: 20 });
    const messageId = await ask();
    await suite.app.settle();

    const cards = repliesTo(suite.fake, messageId).map((reply) => suite.fake.visibleText(reply.messageId));
    expect(cards.length).toBeGreaterThanOrEqual(2);
    for (const card of cards) expect(markdownTableCount(card)).toBeLessThanOrEqual(5);
    expect(cards.reduce((sum, card) => sum + markdownTableCount(card), 0)).toBe(7);
    expect(cards.join('\n').replace(/\s+/g, ' ').trim()).toBe(
      toCardMarkdown(text).replace(/\s+/g, ' ').trim(),
    );
    expectEveryCardCallAccepted(start);
  });

  it('keeps CardKit for the next reply in another chat after CardKit refused one reply', async () => {
    // CardKit refuses every content update of this reply as a bad payload, as it refuses a sixth table.
    suite.fake.fail({
      method: 'PUT',
      path: /\/elements\/reply\/content$/,
      status: 400,
      code: 230099,
      msg: 'Failed to create card content',
      times: Number.POSITIVE_INFINITY,
    });
    const first = 'This answer arrives in small pieces, slowly enough for several updates. '.repeat(3);
    suite.model.enqueue({ text: first, chunks: chunksOf(first, 16), chunkDelayMs: 100 });
    const firstMessage = await ask('oc_chat_one');
    await suite.app.settle(20_000);
    suite.fake.restore();
    const firstCards = repliesTo(suite.fake, firstMessage);
    expect(firstCards.length).toBeGreaterThanOrEqual(2);
    const shown = firstCards.map((reply) => suite.fake.visibleText(reply.messageId)).join('');
    expect(shown.replace(/\s+/g, '')).toBe(first.replace(/\s+/g, ''));

    suite.model.enqueue({ text: 'The second answer.', chunks: ['The second ', 'answer.'], chunkDelayMs: 50 });
    const secondMessage = await ask('oc_chat_two');
    await suite.app.settle();
    const [reply, ...more] = repliesTo(suite.fake, secondMessage);
    expect(more).toEqual([]);
    expect(reply?.content).toMatchObject({ type: 'card' });
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe('The second answer.');
  });

  it('posts an approval card of 60 escape-heavy calls under 30 KB, saying what it leaves out', async () => {
    // Each `"` or `\` of the arguments takes eight bytes in the request: JSON text, card JSON, request body.
    const service = '"\\'.repeat(100);
    suite.model.enqueue({
      toolCalls: Array.from({ length: 60 }, (_, index) => ({
        id: `call_many_${index}`,
        name: 'restart_service',
        arguments: JSON.stringify({ service: `${index}:${service}` }),
      })),
    });
    const start = Date.now();
    const messageId = await ask('oc_chat_approvals');
    await suite.app.settle();
    const card = repliesTo(suite.fake, messageId).find((reply) =>
      JSON.stringify(reply.content).includes('"batch_id"'),
    );
    expect(card).toBeDefined();
    expectEveryCardCallAccepted(start);
    const text = JSON.stringify(card?.content);
    expect(text).toContain('60 actions need approval');
    // What the card leaves out, it says: arguments cut or left out, calls only counted.
    expect(text).toMatch(/more characters|Arguments not shown/);
    expect(text).toMatch(/…and \d+ more \(\d+ waiting\) that do not fit on the card/);
  });
});

/** The code blocks of the cards, in order, as stored: the zero-width spaces that break backtick runs dropped. */
function codeOf(messageIds: string[]): string {
  const text = messageIds.map((id) => suite.fake.visibleText(id)).join('\n');
  return [...text.matchAll(/```json\n([\s\S]*?)\n```/g)]
    .map((match) => match[1]?.replace(/\u200b/g, ''))
    .join('');
}

describe('Show all arguments on Feishu', () => {
  it('posts every argument of a 60-call card below it in cards under 30 KB, decides nothing, and again once decided', async () => {
    // Quotes and backslashes take four bytes each in a card's request body, `<&>` nothing special: the cards
    // are sized on the body.
    const services = Array.from(
      { length: 60 },
      (_, index) => `${index}:${'"\\'.repeat(100)}<&>${'x'.repeat(600)}`,
    );
    const wholeArguments = services.map((service) => JSON.stringify({ service }, null, 2));
    suite.model.enqueue({
      toolCalls: services.map((service, index) => ({
        id: `call_show_${index}`,
        name: 'restart_service',
        arguments: JSON.stringify({ service }),
      })),
    });
    const messageId = await ask('oc_chat_show');
    await suite.app.settle();
    const posted = repliesTo(suite.fake, messageId).find((reply) =>
      JSON.stringify(reply.content).includes('"batch_id"'),
    );
    const batchId = /"batch_id":"([^"]+)"/.exec(JSON.stringify(posted?.content))?.[1] ?? '';
    // The message the request names as its card (a loaded machine may have posted it again).
    const [first] = await suite.app.butler.store.approvals.listBatch(batchId);
    const card = suite.fake.sentMessages().find((message) => message.messageId === first?.cardMessageId);
    if (!card) throw new Error('no approval card was posted');
    const content = JSON.stringify(card.content);
    expect(content).toContain(`{"type":"callback","value":{"show_arguments_batch":"${batchId}"}}`);
    expect(content).toContain(`{"type":"open_url","default_url":"${publicUrl}/console#batch=${batchId}"}`);

    const showAll = () =>
      postToButler(
        suite.url.replace('/events', '/card'),
        cardActionEvent({
          operatorOpenId: approverOpenId,
          messageId: card.messageId,
          chatId: 'oc_chat_show',
          value: { show_arguments_batch: batchId },
        }),
      );
    const argumentCards = () => repliesTo(suite.fake, card.messageId).map((reply) => reply.messageId);
    const expectEveryArgument = async (before: number) => {
      const sent = await waitFor(() => {
        const ids = argumentCards().slice(before);
        return codeOf(ids) === wholeArguments.join('') && ids;
      }, 10_000);
      expect(sent.length).toBeGreaterThan(1);
      return sent;
    };

    const start = Date.now();
    const answer = await showAll();
    expect(answer.body.toast).toEqual({
      type: 'info',
      content: 'Sending the whole arguments of all 60 calls below the card.',
    });
    expect(answer.body).not.toHaveProperty('card');
    await expectEveryArgument(0);
    expectEveryCardCallAccepted(start);
    await suite.app.settle();
    const batch = await suite.app.butler.store.approvals.listBatch(batchId);
    expect(new Set(batch.map((approval) => approval.status))).toEqual(new Set(['pending']));
    expect(suite.fake.sentMessages().find((message) => message.messageId === card.messageId)?.patches).toBe(
      0,
    );
    expect(suite.tools.requests).toHaveLength(0);

    // Rejected, the card still offers the arguments, and the cards show the outcome.
    suite.model.enqueue({ text: 'Not restarting any.' });
    await postToButler(
      suite.url.replace('/events', '/card'),
      cardActionEvent({
        operatorOpenId: approverOpenId,
        messageId: card.messageId,
        value: { batch_id: batchId, decision: 'reject' },
      }),
    );
    await suite.app.settle();
    const decided = suite.fake.sentMessages().find((message) => message.messageId === card.messageId);
    expect(JSON.stringify(decided?.content)).toContain('show_arguments_batch');
    const before = argumentCards().length;
    await showAll();
    const again = await expectEveryArgument(before);
    expect(suite.fake.visibleText(again[0] ?? '')).toContain('Rejected by');
    expect(suite.tools.requests).toHaveLength(0);
  });
});
