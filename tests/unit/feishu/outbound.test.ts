import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { renderApprovalCard } from '../../../src/adapters/feishu/approval-card.js';
import { createCardkitHealth } from '../../../src/adapters/feishu/cardkit-health.js';
import { createFeishuChatAdapter } from '../../../src/adapters/feishu/chat-adapter.js';
import { toCardMarkdown } from '../../../src/adapters/feishu/markdown.js';
import { replyCardBodyBytes } from '../../../src/adapters/feishu/reply-cards.js';
import { defaultStreamSettings, type StreamSettings } from '../../../src/adapters/feishu/stream-settings.js';
import { FeishuUserNames } from '../../../src/adapters/feishu/user-names.js';
import type { ReplyStream, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import type { ApprovalCard } from '../../../src/core/contracts/approval-card.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { FakeFeishuApi, type RecordedCall, rateLimitCode } from '../../helpers/fake-feishu-api.js';
import { markdownTableCount } from '../../helpers/fake-feishu-card-rules.js';
import { feishuClientFor } from '../../helpers/feishu-client.js';
import { waitFor } from '../../helpers/wait-for.js';

let fake: FakeFeishuApi;

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
});
afterAll(() => fake.close());
afterEach(() => fake.restore());

function adapterWith(settings: Partial<StreamSettings> = {}) {
  const api = feishuClientFor(fake, silentLogger);
  return createFeishuChatAdapter({
    api,
    logger: silentLogger,
    now: Date.now,
    settings: { ...defaultStreamSettings, patchIntervalMilliseconds: 300, finishAttempts: 3, ...settings },
    cardkit: createCardkitHealth(),
    names: new FeishuUserNames(api, silentLogger),
  });
}

let userMessageCounter = 0;
function groupTarget(thread?: string): ReplyTarget {
  userMessageCounter += 1;
  const replyTo = `om_user_${userMessageCounter}`;
  return {
    address: { platform: 'feishu', workspace: 'tenant', channel: 'oc_team', thread: thread ?? replyTo },
    replyTo,
    userId: 'ou_alice',
  };
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

async function appendSlowly(stream: ReplyStream, parts: string[], gapMilliseconds = 15): Promise<string> {
  for (const part of parts) {
    await stream.append(part);
    await sleep(gapMilliseconds);
  }
  return parts.join('');
}

async function streamSlowly(stream: ReplyStream, parts: string[], gapMilliseconds = 15): Promise<string> {
  const text = await appendSlowly(stream, parts, gapMilliseconds);
  await stream.finish(text);
  return text;
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index} `);
const since = (start: number) => (call: RecordedCall) => call.at >= start;
const gaps = (calls: RecordedCall[]) =>
  calls.slice(1).map((call, index) => call.at - (calls[index] as RecordedCall).at);

describe('Feishu streaming reply (CardKit)', () => {
  it('creates a streaming card, updates it with increasing sequence, throttled, and closes it', async () => {
    const start = Date.now();
    const created: string[] = [];
    const target = groupTarget();
    const stream = await adapterWith().openReply(target, { onMessageCreated: (id) => void created.push(id) });
    const text = await streamSlowly(stream, ['# Status\n', ...words(40)]);

    const [cardCall, ...moreCards] = fake.callsTo('POST', '/open-apis/cardkit/v1/cards').filter(since(start));
    expect(moreCards).toEqual([]);
    expect(JSON.parse(String(cardCall?.body?.data))).toMatchObject({
      schema: '2.0',
      config: { streaming_mode: true },
    });
    const replies = fake.callsTo('POST', `/open-apis/im/v1/messages/${target.replyTo}/reply`);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toMatchObject({ msg_type: 'interactive', reply_in_thread: false });

    const updates = fake.callsTo('PUT', /\/elements\/reply\/content$/).filter(since(start));
    const sequences = updates.map((call) => call.body?.sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(updates.every((call) => call.code === 0)).toBe(true);
    expect(updates.length).toBeLessThan(41);
    // One update at a time, at most about every 100 ms (a little slack for timer jitter).
    for (const gap of gaps(updates)) expect(gap).toBeGreaterThanOrEqual(90);

    expect(stream.messageIds).toEqual(created);
    const [messageId] = created;
    expect(fake.visibleText(messageId as string)).toBe(toCardMarkdown(text));
    expect(fake.visibleText(messageId as string)).toContain('#### Status');
    const card = [...fake.cards.values()].at(-1);
    expect(card?.streaming).toBe(false);
  });

  it('shares the app budget between cards streaming at once: each updates less often, none queues', async () => {
    const start = Date.now();
    // One adapter, as one Butler process: 25 replies share cardElement.content's 50 a second per app.
    const adapter = adapterWith();
    const streams = await Promise.all(Array.from({ length: 25 }, () => adapter.openReply(groupTarget())));
    const texts = await Promise.all(streams.map((stream) => streamSlowly(stream, words(60), 25)));

    const updates = fake.callsTo('PUT', /\/elements\/reply\/content$/).filter(since(start));
    const byCard = new Map<string, RecordedCall[]>();
    for (const call of updates) byCard.set(call.path, [...(byCard.get(call.path) ?? []), call]);
    // Alone a card updates every 120 ms (a dozen times here); 25 sharers of 1,000 a minute per app get one update
    // every 1.5 s each while the model writes, then the final text.
    // Early cards update more, until the others join.
    expect(updates.length).toBeLessThan(25 * 3);
    for (const calls of byCard.values()) expect(calls.length).toBeLessThanOrEqual(6);
    for (let second = start; second < Date.now(); second += 250) {
      const inWindow = updates.filter((call) => call.at >= second && call.at < second + 1000);
      expect(inWindow.length).toBeLessThanOrEqual(50);
    }
    streams.forEach((stream, index) => {
      expect(fake.visibleText(stream.messageIds[0] as string)).toBe(toCardMarkdown(texts[index] as string));
    });
  });

  it('answers in the thread when the conversation is a thread, and straight into a direct chat', async () => {
    const threaded = groupTarget('omt_topic1');
    await streamSlowly(await adapterWith().openReply(threaded), ['in ', 'thread']);
    const reply = fake.callsTo('POST', `/open-apis/im/v1/messages/${threaded.replyTo}/reply`)[0];
    expect(reply?.body).toMatchObject({ reply_in_thread: true });

    const direct: ReplyTarget = {
      address: { platform: 'feishu', workspace: 'tenant', channel: 'oc_dm_alice', thread: 'main' },
      replyTo: 'om_dm_1',
      userId: 'ou_alice',
    };
    await streamSlowly(await adapterWith().openReply(direct), ['hello']);
    const create = fake.callsTo('POST', '/open-apis/im/v1/messages').at(-1);
    expect(create?.query).toEqual({ receive_id_type: 'chat_id' });
    expect(create?.body).toMatchObject({ receive_id: 'oc_dm_alice', msg_type: 'interactive' });
  });

  it('skips a frame when CardKit rate-limits an update and still ends with the full text', async () => {
    const target = groupTarget();
    const stream = await adapterWith().openReply(target);
    await stream.append('first part ');
    await sleep(150);
    fake.rateLimit(/\/elements\/reply\/content$/, 2, 'PUT');
    const full = `first part ${await appendSlowly(stream, words(30))}`;
    await stream.finish(full);
    const limited = fake
      .callsTo('PUT', /\/elements\/reply\/content$/)
      .filter((call) => call.code === rateLimitCode);
    expect(limited.length).toBe(2);
    expect(fake.visibleText(stream.messageIds[0] as string)).toBe(toCardMarkdown(full));
  });

  it('rolls over into a new card when the card gets too big, keeping every part', async () => {
    const target = groupTarget();
    const stream = await adapterWith({ maxCardBodyBytes: 1_000 }).openReply(target);
    const paragraphs = Array.from(
      { length: 12 },
      (_, index) => `Paragraph ${index}: ${'text '.repeat(12)}\n\n`,
    );
    const text = await streamSlowly(stream, paragraphs, 5);
    expect(stream.messageIds.length).toBeGreaterThanOrEqual(3);
    const shown = stream.messageIds.map((id) => fake.visibleText(id));
    for (const part of shown) expect(replyCardBodyBytes(part)).toBeLessThanOrEqual(1_000);
    expect(shown.join('').replace(/\s+/g, ' ').trim()).toBe(text.replace(/\s+/g, ' ').trim());
    // Every rolled-over card is replied to the same user message, and all streams are closed.
    expect(fake.callsTo('POST', `/open-apis/im/v1/messages/${target.replyTo}/reply`)).toHaveLength(
      stream.messageIds.length,
    );
    const cards = stream.messageIds.map((id) => {
      const reference = fake.messages.get(id)?.content.data as { card_id: string };
      return fake.cards.get(reference.card_id);
    });
    expect(cards.every((card) => card?.streaming === false)).toBe(true);
  });

  it('rolls over before CardKit ends streaming mode on a long-running reply', async () => {
    const stream = await adapterWith({ cardkitRolloverMilliseconds: 150 }).openReply(groupTarget());
    const text = await streamSlowly(stream, words(20), 25);
    expect(stream.messageIds.length).toBeGreaterThanOrEqual(2);
    const shown = stream.messageIds.map((id) => fake.visibleText(id)).join('');
    expect(shown.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });
});

describe('Feishu streaming reply (fallback)', () => {
  it('sends a card and patches it at most every patch interval when CardKit is unavailable', async () => {
    fake.cardkitUnavailable();
    const start = Date.now();
    const target = groupTarget();
    const stream = await adapterWith().openReply(target);
    const text = await streamSlowly(stream, words(40), 20);
    const [messageId] = stream.messageIds;
    const message = fake.messages.get(messageId as string);
    expect(message?.content).toMatchObject({ schema: '2.0', config: { update_multi: true } });
    const patches = fake.callsTo('PATCH', `/open-apis/im/v1/messages/${messageId}`).filter(since(start));
    expect(patches.length).toBeGreaterThan(0);
    for (const gap of gaps(patches)) expect(gap).toBeGreaterThanOrEqual(280);
    expect(fake.visibleText(messageId as string)).toBe(toCardMarkdown(text));
  });

  it('skips frames on rate limits while patching and delivers the final text', async () => {
    fake.cardkitUnavailable();
    fake.rateLimit(/^\/open-apis\/im\/v1\/messages\/om_[^/]+$/, 2, 'PATCH');
    const stream = await adapterWith({ patchIntervalMilliseconds: 50 }).openReply(groupTarget());
    const text = await streamSlowly(stream, words(30), 10);
    const limited = fake
      .callsTo('PATCH', /^\/open-apis\/im\/v1\/messages\//)
      .filter((call) => call.code === rateLimitCode);
    expect(limited).toHaveLength(2);
    expect(fake.visibleText(stream.messageIds[0] as string)).toBe(toCardMarkdown(text));
  });

  it('continues in a patched card when CardKit updates keep failing', async () => {
    const stream = await adapterWith().openReply(groupTarget());
    await stream.append('shown by cardkit. ');
    await sleep(150);
    fake.fail({
      method: 'PUT',
      path: /\/elements\/reply\/content$/,
      status: 500,
      code: 1,
      times: Number.POSITIVE_INFINITY,
    });
    const rest = await appendSlowly(stream, words(15), 30);
    await stream.finish(`shown by cardkit. ${rest}`);
    expect(stream.messageIds.length).toBeGreaterThanOrEqual(2);
    const shown = stream.messageIds.map((id) => fake.visibleText(id)).join(' ');
    expect(shown.replace(/\s+/g, ' ')).toContain('shown by cardkit.');
    expect(shown.replace(/\s+/g, '')).toBe(`shown by cardkit. ${rest}`.replace(/\s+/g, ''));
  });

  it('continues in a new patched card before a sixth table, so every table arrives', async () => {
    fake.cardkitUnavailable();
    const start = Date.now();
    const tables = Array.from(
      { length: 7 },
      (_, index) => `| host | load |\n|---|---|\n| web-${index} | 0.${index} |\n\n`,
    );
    const stream = await adapterWith({ patchIntervalMilliseconds: 100 }).openReply(groupTarget());
    const text = await streamSlowly(stream, tables, 30);
    const shown = stream.messageIds.map((id) => fake.visibleText(id));
    expect(shown.length).toBeGreaterThanOrEqual(2);
    for (const card of shown) expect(markdownTableCount(card)).toBeLessThanOrEqual(5);
    expect(shown.join('').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
    const messageCalls = fake.callsTo('PATCH', /^\/open-apis\/im\/v1\/messages\//).filter(since(start));
    expect(messageCalls.filter((call) => call.code !== 0)).toEqual([]);
  });

  it('skips CardKit for new replies only once the failures of two replies point at the platform', async () => {
    const adapter = adapterWith();
    const usesCardkit = async (text: string) => {
      const stream = await adapter.openReply(groupTarget());
      await streamSlowly(stream, [text]);
      return fake.messages.get(stream.messageIds[0] as string)?.content.type === 'card';
    };
    fake.cardkitUnavailable();
    expect(await usesCardkit('first, in an outage')).toBe(false);
    fake.restore();
    expect(await usesCardkit('second, after it')).toBe(true);
    fake.cardkitUnavailable();
    expect(await usesCardkit('third, in an outage again')).toBe(false);
    fake.restore();
    const creates = fake.callsTo('POST', '/open-apis/cardkit/v1/cards').length;
    expect(await usesCardkit('fourth: two replies saw CardKit down')).toBe(false);
    expect(fake.callsTo('POST', '/open-apis/cardkit/v1/cards')).toHaveLength(creates);
  });

  it('overwrites the messages of an interrupted attempt instead of posting again', async () => {
    fake.cardkitUnavailable();
    const earlier = groupTarget();
    const first = await adapterWith().openReply(earlier);
    await streamSlowly(first, ['half an ans']);
    fake.restore();
    const created: string[] = [];
    const resumed = await adapterWith().openReply(earlier, {
      resume: first.messageIds,
      onMessageCreated: (id) => void created.push(id),
    });
    const text = await streamSlowly(resumed, ['the whole ', 'answer']);
    expect(resumed.messageIds).toEqual(first.messageIds);
    expect(created).toEqual([]);
    expect(fake.visibleText(first.messageIds[0] as string)).toBe(text);
    expect(fake.callsTo('POST', `/open-apis/im/v1/messages/${earlier.replyTo}/reply`)).toHaveLength(1);
  });
});

describe('Feishu notices, approval cards and the working indicator', () => {
  const card: ApprovalCard = {
    batchId: 'batch_9',
    calls: [
      {
        approvalId: 'appr_9',
        status: 'pending',
        toolName: 'restart_service',
        summary: 'Restart payments',
        argumentsJson: '{"service":"payments"}',
        argumentsLength: 22,
        argumentsCut: false,
        risk: 'medium',
        whoMayApprove: 'the requester or an approver',
      },
    ],
    requesters: [{ id: 'ou_alice' }],
    approverIds: [],
    expiresAt: new Date('2026-12-01T12:00:00Z'),
  };

  it('posts notices as text replies and approval cards as interactive replies, then patches the outcome', async () => {
    const adapter = adapterWith();
    const target = groupTarget('omt_ops');
    await adapter.postNotice(target, 'The model is unavailable right now.');
    const notice = fake.callsTo('POST', `/open-apis/im/v1/messages/${target.replyTo}/reply`)[0];
    expect(notice?.body).toMatchObject({ msg_type: 'text', reply_in_thread: true });
    expect(JSON.parse(String(notice?.body?.content))).toEqual({
      text: 'The model is unavailable right now.',
    });

    const messageId = await adapter.postApprovalCard(target, card);
    expect(fake.messages.get(messageId)?.content).toEqual(renderApprovalCard(card));
    const decided: ApprovalCard = {
      ...card,
      calls: card.calls.map((call) => ({
        ...call,
        status: 'approved',
        decidedBy: { id: 'ou_bob' },
        decidedAt: new Date(),
      })),
    };
    await adapter.updateApprovalCard(target.address, messageId, decided);
    expect(fake.messages.get(messageId)?.content).toEqual(renderApprovalCard(decided));
    expect(JSON.stringify(fake.messages.get(messageId)?.content)).not.toContain('"button"');
  });

  it('shows a reaction while working, removes it after, and swallows failures', async () => {
    const adapter = adapterWith();
    const target = groupTarget();
    const clear = await adapter.showWorking(target);
    // The reaction is cosmetic: showing it never waits for Feishu.
    await waitFor(() => fake.reactions.size > 0 || undefined);
    const [reactionId, reaction] = [...fake.reactions.entries()].at(-1) ?? [];
    expect(reaction).toEqual({ messageId: target.replyTo, emojiType: 'Typing', deleted: false });
    await clear();
    expect(fake.reactions.get(reactionId as string)?.deleted).toBe(true);

    fake.fail({ path: /\/reactions/, status: 400, code: 231001, times: 2 });
    const clearFailed = await adapter.showWorking(groupTarget());
    await expect(clearFailed()).resolves.toBeUndefined();
  });
});
