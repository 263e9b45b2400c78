import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/core/contracts/events.js';
import type { ClaimedBatch, NewApproval, Store } from '../../../src/core/contracts/store.js';
import { createStore } from '../../../src/storage/store.js';
import { databaseKind, openTestDatabase, type TestDatabase } from '../../helpers/database.js';

let database: TestDatabase;
let store: Store;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());

const address = { platform: 'slack' as const, workspace: 'T1', channel: 'C1', thread: '1.0' };

function message(key: string, text = 'hello'): InboundMessage {
  return {
    kind: 'message',
    address,
    messageId: key,
    eventId: `Ev${key}`,
    dedupKey: `C1:${key}`,
    user: { id: 'U1' },
    text,
    isMention: true,
    isDirect: false,
    sentAt: new Date().toISOString(),
  };
}

/** Claims until the wanted conversation comes up (others' leftovers are claimed on the way and lapse). */
async function claimConversation(owner: string, conversationKey: string, leaseMs: number) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const claim = await store.inbox.claimNext(owner, leaseMs);
    if (claim?.conversationKey === conversationKey) return claim;
    if (claim)
      await store.inbox.finish(
        claim.events.map((event) => event.id),
        'done',
      );
  }
  throw new Error(`never claimed ${conversationKey}`);
}

const inboxEvent = (conversationKey: string, key: string) => ({
  platform: 'slack' as const,
  dedupKey: `${conversationKey}/${key}`,
  conversationKey,
  userId: 'U1',
  payload: message(key),
});

const pendingApproval = (): NewApproval => ({
  batchId: randomUUID(),
  conversationKey: 'slack:T1:C1:approve',
  platform: 'slack',
  toolName: 'restart',
  toolCallId: 'call_9',
  arguments: { service: 'api' },
  risk: 'high',
  summary: 'Restart api',
  requestedBy: { id: 'U1' },
  requesters: [{ id: 'U1' }],
  approverIds: ['U2'],
  expiresAt: new Date(Date.now() + 60_000),
  resume: {
    turnId: 't',
    assistant: { content: '', toolCalls: [] },
    results: [],
  },
});

describe(`storage on ${databaseKind}`, () => {
  it('drops a redelivered event by its dedup key', async () => {
    const first = await store.inbox.insert(inboxEvent('dedup', 'a'));
    const again = await store.inbox.insert(inboxEvent('dedup', 'a'));
    expect(first).toBeTypeOf('number');
    expect(again).toBeUndefined();
  });

  it('gives each conversation to one worker at a time and batches its queued events', async () => {
    await store.inbox.insert(inboxEvent('busy-1', 'a'));
    await store.inbox.insert(inboxEvent('busy-1', 'b'));
    await store.inbox.insert(inboxEvent('busy-2', 'c'));
    // Three workers race until nothing is left; leases are held, so nothing can be claimed twice.
    const claims: ClaimedBatch[] = [];
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all(
        ['a', 'b', 'c'].map((worker) => store.inbox.claimNext(worker, 30_000)),
      );
      claims.push(...results.filter((claim): claim is ClaimedBatch => claim !== undefined));
    }
    const keys = claims.map((claim) => claim.conversationKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(expect.arrayContaining(['busy-1', 'busy-2']));
    const busy = claims.find((claim) => claim.conversationKey === 'busy-1');
    expect(busy?.events.map((event) => event.dedupKey)).toEqual(['busy-1/a', 'busy-1/b']);
    for (const claim of claims) {
      await store.inbox.finish(
        claim.events.map((event) => event.id),
        'done',
      );
    }
    await store.inbox.releaseAllLeases();
  });

  it('hands out conversations in rounds: each person’s and each channel’s first, then their second', async () => {
    // Rounds count what runs now: a person whose first request is being answered waits behind others' first.
    await store.inbox.releaseAllLeases();
    const event = (conversationKey: string, senderKey: string) => ({
      ...inboxEvent(conversationKey, 'fair'),
      senderKey,
    });
    // Olga asks five times (five threads of #ops), then Ana and Ben once each, Ben in another channel, and
    // three people in #incident one after another.
    for (const thread of ['1', '2', '3', '4', '5'])
      await store.inbox.insert(event(`slack:T:ops:${thread}`, 'olga'));
    await store.inbox.insert(event('slack:T:dev:1', 'ana'));
    await store.inbox.insert(event('slack:T:help:1', 'ben'));
    for (const [thread, person] of [
      ['1', 'cy'],
      ['2', 'di'],
      ['3', 'ed'],
    ])
      await store.inbox.insert(event(`slack:T:incident:${thread}`, person as string));
    // Workers take them one after another, each turn still running when the next is claimed.
    const claims: ClaimedBatch[] = [];
    for (let claim = await store.inbox.claimNext('fair', 30_000); claim; ) {
      claims.push(claim);
      claim = await store.inbox.claimNext('fair', 30_000);
    }
    const order = claims.map((claim) => claim.conversationKey);
    await store.inbox.finish(
      claims.flatMap((claim) => claim.events.map((claimed) => claimed.id)),
      'done',
    );
    await store.inbox.releaseAllLeases();
    expect(order).toEqual([
      'slack:T:ops:1',
      'slack:T:dev:1',
      'slack:T:help:1',
      'slack:T:incident:1',
      'slack:T:ops:2',
      'slack:T:incident:2',
      'slack:T:ops:3',
      'slack:T:incident:3',
      'slack:T:ops:4',
      'slack:T:ops:5',
    ]);
  });

  it('hands out whole conversations, each once, to claimers racing for them', async () => {
    await store.inbox.releaseAllLeases();
    const keys = Array.from({ length: 12 }, (_, index) => `race-${index}`);
    for (const key of keys) for (const n of [1, 2, 3]) await store.inbox.insert(inboxEvent(key, String(n)));
    const claims: ClaimedBatch[] = [];
    for (let round = 0; round < 20; round++) {
      // On Postgres these run on separate connections, at the same time.
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, racer) => store.inbox.claimNext(`racer-${racer}`, 30_000)),
      );
      claims.push(...results.filter((claim): claim is ClaimedBatch => claim !== undefined));
    }
    const raced = claims.filter((claim) => claim.conversationKey.startsWith('race-'));
    expect(raced.map((claim) => claim.conversationKey).sort()).toEqual([...keys].sort());
    for (const claim of raced) {
      const key = claim.conversationKey;
      expect(claim.events.map((event) => event.dedupKey)).toEqual([`${key}/1`, `${key}/2`, `${key}/3`]);
    }
    for (const claim of claims)
      await store.inbox.finish(
        claim.events.map((event) => event.id),
        'done',
      );
    await store.inbox.releaseAllLeases();
  });

  it('hands a conversation whose lease lapsed to another worker, with attempts counted', async () => {
    await store.inbox.releaseAllLeases();
    await store.inbox.insert(inboxEvent('crash', 'a'));
    const claim = await claimConversation('dead-worker', 'crash', 1);
    expect(claim.events[0]?.attempts).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Claims take pending events only: the sweeper offers again what the lapsed lease left claimed.
    expect(await store.inbox.claimNext('live-worker', 30_000)).toBeUndefined();
    expect(await store.inbox.reopenLapsed()).toBe(1);
    const again = await claimConversation('live-worker', 'crash', 30_000);
    // A live lease keeps its events claimed.
    expect(await store.inbox.reopenLapsed()).toBe(0);
    expect(again.events[0]?.attempts).toBe(2);
    expect(await store.inbox.renewLeases('dead-worker', ['crash'], 30_000)).toEqual([]);
    expect(await store.inbox.renewLeases('live-worker', ['crash', 'never-held'], 30_000)).toEqual(['crash']);
  });

  it('prunes the oldest finished events past their retention, in batches, and never an open one', async () => {
    const finished: number[] = [];
    for (const key of ['a', 'b', 'c'])
      finished.push((await store.inbox.insert(inboxEvent('prune', key))) ?? 0);
    const open = await store.inbox.insert(inboxEvent('prune', 'open'));
    await store.inbox.finish(finished, 'done');
    const cutoff = new Date(Date.now() + 60_000);
    // Earlier tests left finished events too: prune everything finished before the cutoff.
    while ((await store.inbox.pruneFinished(cutoff, 2)) === 2);
    expect(await store.inbox.pruneFinished(cutoff, 2)).toBe(0);
    // The dedup record went with the finished events: a redelivery is accepted again; the open one stays.
    expect(await store.inbox.insert(inboxEvent('prune', 'a'))).toBeTypeOf('number');
    expect(await store.inbox.insert(inboxEvent('prune', 'open'))).toBeUndefined();
    expect(open).toBeTypeOf('number');
    expect(await store.inbox.pruneFinished(new Date(Date.now() - 60_000), 10)).toBe(0);
  });

  it('stores concurrent deliveries together, in order, each duplicate dropped once', async () => {
    const keys = ['a', 'b', 'a', 'c', 'b', 'd'];
    const ids = await Promise.all(keys.map((key) => store.inbox.insert(inboxEvent('burst', key))));
    // Each key once. a and b each go alone, on two connections at once, so either may be numbered first; the
    // other four wait and go as one statement, numbered in the order they came (on a loaded machine the batch can
    // even reach the server before the lone a or b, and then it is the batch's copy that is stored).
    for (const key of ['a', 'b', 'c', 'd'])
      expect(
        ids.filter((id, index) => keys[index] === key && id !== undefined),
        key,
      ).toHaveLength(1);
    const [, , , c, , d] = ids as number[];
    expect(c).toBeLessThan(d ?? 0);
    const claim = await claimConversation('burst-owner', 'burst', 30_000);
    expect(claim.events.map((event) => event.dedupKey).sort()).toEqual([
      'burst/a',
      'burst/b',
      'burst/c',
      'burst/d',
    ]);
  });

  it('ranks each claimed message among its sender’s recent ones, for rate limiting', async () => {
    const sender = `U-rate-${Date.now()}`;
    const other = { ...inboxEvent('rate-other', 'c'), userId: `${sender}-other` };
    await store.inbox.insert({ ...inboxEvent('rate', 'a'), userId: sender });
    await store.inbox.insert(other);
    await store.inbox.insert({ ...inboxEvent('rate', 'b'), userId: sender });
    const claim = await claimConversation('rate-owner', 'rate', 30_000);
    expect(claim.events.map((event) => event.senderRank)).toEqual([1, 2]);
    const otherClaim = await claimConversation('rate-owner', 'rate-other', 30_000);
    expect(otherClaim.events.map((event) => event.senderRank)).toEqual([1]);
  });

  it('releases the finished conversation’s lease in the next claim', async () => {
    await store.inbox.insert(inboxEvent('release-first', 'a'));
    const claim = await claimConversation('release-owner', 'release-first', 30_000);
    await store.inbox.finish(
      claim.events.map((event) => event.id),
      'done',
    );
    await store.inbox.insert(inboxEvent('release-first', 'b'));
    // Still leased to release-owner: another worker cannot take it.
    expect((await store.inbox.claimNext('someone-else', 30_000))?.conversationKey).not.toBe('release-first');
    const next = await store.inbox.claimNext('release-owner', 30_000, 'release-first');
    // The release's own statement still saw the lease; the next claim takes the conversation.
    expect(next?.conversationKey).not.toBe('release-first');
    expect((await claimConversation('someone-else', 'release-first', 30_000)).events).toHaveLength(1);
  });

  it('says whether other work waits behind the conversation it hands out', async () => {
    for (let claim = await store.inbox.claimNext('drain', 30_000); claim; ) {
      await store.inbox.finish(
        claim.events.map((event) => event.id),
        'done',
      );
      claim = await store.inbox.claimNext('drain', 30_000);
    }
    await store.inbox.insert(inboxEvent('more-first', 'a'));
    await store.inbox.insert(inboxEvent('more-second', 'a'));
    const first = await store.inbox.claimNext('more-owner', 30_000);
    expect(first).toMatchObject({ conversationKey: 'more-first', more: true });
    const second = await store.inbox.claimNext('more-owner', 30_000);
    expect(second).toMatchObject({ conversationKey: 'more-second', more: false });
    expect(await store.inbox.claimNext('more-owner', 30_000)).toBeUndefined();
  });

  it('keeps compacted messages and serves only the window', async () => {
    const conversation = await store.conversations.ensure('slack:T1:C1:window', address);
    const again = await store.conversations.ensure('slack:T1:C1:window', address);
    expect(again.id).toBe(conversation.id);
    await store.conversations.append(conversation.id, [
      { role: 'user', content: 'one', author: 'Ana', tokens: 3 },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'recall', arguments: '{}' }],
        tokens: 5,
      },
      { role: 'tool', content: 'nothing', toolCallId: 'call_1', tokens: 2 },
      { role: 'assistant', content: 'two', tokens: 3 },
    ]);
    const window = await store.conversations.window(conversation.id);
    expect(window.map((entry) => entry.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(window[0]).toMatchObject({ role: 'user', author: 'Ana' });
    expect(window[1]).toMatchObject({ toolCalls: [{ id: 'call_1', name: 'recall' }] });
    expect(window[2]).toMatchObject({ toolCallId: 'call_1' });

    await store.conversations.applyCompaction(conversation.id, {
      summary: 'Ana said one.',
      summaryTokens: 4,
      foldedThroughId: window[2]?.id ?? 0,
      messagesFolded: 3,
      tokensBefore: 13,
      tokensAfter: 7,
      model: 'small',
      durationMs: 12.4,
    });
    const after = await store.conversations.window(conversation.id);
    expect(after.map((entry) => entry.content)).toEqual(['two']);
    const record = await store.conversations.find('slack:T1:C1:window');
    expect(record?.summary).toBe('Ana said one.');
    expect(record?.lastCompactedAt).toBeInstanceOf(Date);
  });

  it('takes one decision per approval and runs its tool once', async () => {
    const approval = pendingApproval();
    const created = await store.approvals.create(approval);
    const decisions = await Promise.all(
      ['U2', 'U3', 'U4'].map((id) =>
        store.approvals.decide(created.id, {
          status: 'approved',
          decidedBy: { id, platform: 'slack' },
          reason: null,
          at: new Date(),
        }),
      ),
    );
    expect(decisions.filter(Boolean)).toHaveLength(1);
    const runs = await Promise.all([1, 2, 3].map(() => store.approvals.beginExecution(created.id)));
    expect(runs.filter(Boolean)).toHaveLength(1);

    const late = await store.approvals.create({ ...approval, expiresAt: new Date(Date.now() - 1000) });
    expect(
      await store.approvals.decide(late.id, {
        status: 'approved',
        decidedBy: { id: 'U2', platform: 'slack' },
        reason: null,
        at: new Date(),
      }),
    ).toBeUndefined();
    const expired = await store.approvals.expireDue(new Date());
    expect(expired.map((entry) => entry.id)).toContain(late.id);
    expect((await store.approvals.get(late.id))?.status).toBe('expired');
  });

  it("lists a card's calls in the order the model made them, though they share one creation time", async () => {
    const batchId = randomUUID();
    const toolCalls = ['call_a', 'call_b', 'call_c'].map((id) => ({ id, name: 'restart', arguments: '{}' }));
    const resume = { turnId: 't', assistant: { content: '', toolCalls }, results: [] };
    // Created last call first, in one transaction: one now() for all three.
    await store.transaction(async (tx) => {
      for (const id of ['call_c', 'call_a', 'call_b'])
        await tx.approvals.create({ ...pendingApproval(), batchId, toolCallId: id, resume });
    });
    const listed = await store.approvals.listBatch(batchId);
    expect(new Set(listed.map((approval) => approval.createdAt.getTime())).size).toBe(1);
    expect(listed.map((approval) => approval.toolCallId)).toEqual(['call_a', 'call_b', 'call_c']);
  });

  it('counts what waits, for metrics: open inbox events, claimed ones included, and pending approvals', async () => {
    // Other tests of this file leave events and approvals behind: count from where they are.
    const before = await store.inbox.backlog();
    const first = await store.inbox.insert(inboxEvent('backlog', 'a'));
    await store.inbox.insert(inboxEvent('backlog', 'b'));
    const open = await store.inbox.backlog();
    expect(open.open).toBe(before.open + 2);
    expect(open.oldestAgeSeconds).toBeGreaterThanOrEqual(0);
    const claim = await claimConversation('metrics-worker', 'backlog', 60_000);
    expect((await store.inbox.backlog()).open).toBe(before.open + 2);
    await store.inbox.finish(
      claim.events.map((event) => event.id),
      'done',
    );
    expect(claim.events.map((event) => event.id)).toContain(first);
    expect((await store.inbox.backlog()).open).toBe(before.open);

    const pending = await store.approvals.countPending();
    const waiting = await store.approvals.create(pendingApproval());
    expect(await store.approvals.countPending()).toBe(pending + 1);
    await store.approvals.decide(waiting.id, {
      status: 'rejected',
      decidedBy: { id: 'U2', platform: 'slack' },
      reason: null,
      at: new Date(),
    });
    expect(await store.approvals.countPending()).toBe(pending);
  });

  it('searches memories per owner, treating % and _ literally', async () => {
    const owner = {
      key: 'slack:U1',
      keys: ['slack:U1'],
      platform: 'slack' as const,
      workspace: 'T1',
      userId: 'U1',
    };
    const other = { ...owner, key: 'slack:U2', keys: ['slack:U2'], userId: 'U2' };
    await store.memories.add(owner, 'Prefers deploys after 10:00');
    await store.memories.add(owner, 'Budget is 100% spent');
    await store.memories.add(other, 'Prefers tea');
    expect((await store.memories.search(owner, 'prefers', 10)).map((memory) => memory.content)).toEqual([
      'Prefers deploys after 10:00',
    ]);
    expect(await store.memories.search(owner, '0%', 10)).toHaveLength(1);
    expect(await store.memories.search(owner, '_', 10)).toHaveLength(0);
    const [memory] = await store.memories.search(owner, 'prefers', 1);
    expect(await store.memories.remove(other, memory?.id ?? '')).toBe(false);
    expect(await store.memories.remove(owner, memory?.id ?? '')).toBe(true);
  });

  it('reads a person’s memories under every key they may carry, and saves new ones under the person', async () => {
    const asIdentity = {
      key: 'slack:U9',
      keys: ['slack:U9'],
      platform: 'slack' as const,
      workspace: 'T1',
      userId: 'U9',
    };
    await store.memories.add(asIdentity, 'Told before people listed her');
    const person = { ...asIdentity, key: 'person:nina', keys: ['person:nina', 'slack:U9', 'api:nina'] };
    await store.memories.add({ ...person, platform: 'api', userId: 'nina' }, 'Told through her API key');
    expect((await store.memories.search(person, '', 10)).map((memory) => memory.content).sort()).toEqual([
      'Told before people listed her',
      'Told through her API key',
    ]);
    expect(await store.memories.search(asIdentity, 'API', 10)).toEqual([]);
  });

  it('rolls back a transaction as a whole', async () => {
    const conversation = await store.conversations.ensure('slack:T1:C1:tx', address);
    await expect(
      store.transaction(async (tx) => {
        await tx.conversations.append(conversation.id, [{ role: 'user', content: 'lost', tokens: 1 }]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.conversations.window(conversation.id)).toHaveLength(0);
  });
});
