import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ChatUser, ConversationAddress } from '../../../src/core/contracts/events.js';
import type { TurnUsageRecord, UsageGroup, UsageRollup } from '../../../src/core/contracts/store.js';
import { turnUsage } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  startFakeModelServer,
} from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/** Prices in USD per million tokens, chosen so that small turns cost whole cents. */
const pricing = { 'test-model': { input: 100, output: 200 }, 'cheap-model': { input: 10, output: 20 } };
const threshold = 800;

let model: FakeModelServer;
let cheap: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let unpricedPlatform: RecordingAdapter;
let app: TestButler;
let unpriced: TestButler;
let thread = 0;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };

beforeAll(async () => {
  model = await startFakeModelServer();
  cheap = await startFakeModelServer();
  toolServer = await startToolServer();
  platform = new RecordingAdapter();
  unpricedPlatform = new RecordingAdapter();
  const env = {
    BUTLER_BASE_URL: model.baseUrl,
    BUTLER_MODEL: 'test-model',
    BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS: String(threshold),
    BUTLER_CONTEXT_COMPACTION_BASE_URL: cheap.baseUrl,
    BUTLER_CONTEXT_COMPACTION_MODEL: 'cheap-model',
  };
  app = await startTestButler({
    env,
    config: {
      pricing,
      approvers: { console: ['olga'] },
      compaction: { retryAfterSeconds: 0 },
      tools: [
        {
          name: 'scale_service',
          description: 'Scale a service.',
          risk: 'medium',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${toolServer.url}/scale_service` },
        },
      ],
    },
    adapters: [platform],
  });
  unpriced = await startTestButler({ env, adapters: [unpricedPlatform] });
});
afterAll(async () => {
  await app.close();
  await unpriced.close();
  await model.close();
  await cheap.close();
  await toolServer.close();
});
beforeEach(() => {
  model.reset();
  cheap.reset();
});

function newAddress(channel = 'usage'): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel, thread: `u${thread}` };
}

async function say(
  target: TestButler,
  address: ConversationAddress,
  text: string,
  user: ChatUser = ana,
  isDirect = false,
) {
  await target.butler.service.accept(inboundMessage({ text, address, user, isDirect }));
  await target.settle();
}

async function rowsOf(target: TestButler, address: ConversationAddress) {
  return target.butler.database.db
    .select()
    .from(turnUsage)
    .where(eq(turnUsage.conversationKey, encodeConversationKey(address)))
    .orderBy(asc(turnUsage.id));
}

const startOfToday = () => new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);

describe(`usage accounting on ${databaseKind}`, () => {
  it("records each turn with the model's reported usage, its model and its cost", async () => {
    const address = newAddress();
    model.enqueue(
      { text: 'Hello.', usage: { promptTokens: 300, completionTokens: 50 } },
      { text: 'Sure.', usage: { promptTokens: 200, completionTokens: 100 } },
    );
    await say(app, address, 'hi');
    await say(app, address, 'and again');

    const rows = await rowsOf(app, address);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      conversationKey: encodeConversationKey(address),
      platform: 'console',
      workspace: 'local',
      channel: 'usage',
      userId: 'ana',
      day: new Date().toISOString().slice(0, 10),
      model: 'test-model',
      compactionModel: null,
      promptTokens: 300,
      completionTokens: 50,
      compactionTokens: 0,
    });
    expect(rows[0]?.costUsd).toBeCloseTo((300 * 100 + 50 * 200) / 1e6, 12);
    expect(rows[1]).toMatchObject({ promptTokens: 200, completionTokens: 100 });
    expect(rows[1]?.costUsd).toBeCloseTo(0.04, 12);
    expect(new Set(rows.map((row) => row.turnId)).size).toBe(2);

    const [rollup] = (
      await app.butler.store.usage.rollup({ groupBy: 'conversation', since: startOfToday() })
    ).filter((entry) => entry.key === encodeConversationKey(address));
    expect(rollup).toMatchObject({ turns: 2, promptTokens: 500, completionTokens: 150, compactionTokens: 0 });
    expect(rollup?.costUsd).toBeCloseTo(0.08, 12);
  });

  it('writes a row for a parked turn and one for its continuation, adding up to the conversation', async () => {
    const address = newAddress();
    model.enqueue(
      { text: 'Scaling.', toolCalls: [{ name: 'scale_service', arguments: '{"service":"api"}' }] },
      { text: 'Scaled api.' },
    );
    await say(app, address, 'scale api please');
    const approvalId = platform.lastCard().card.calls[0]?.approvalId ?? '';
    await app.butler.service.decide({ approvalId, platform: 'console', user: olga, decision: 'approve' });
    await app.settle();
    expect(platform.finalTexts().at(-1)).toBe('Scaled api.');

    const rows = await rowsOf(app, address);
    expect(rows).toHaveLength(2);
    expect(rows[0]?.turnId).not.toBe(rows[1]?.turnId);
    // The continuation answers the person who asked, not the approver.
    expect(rows.map((row) => row.userId)).toEqual(['ana', 'ana']);
    expect(rows.every((row) => row.promptTokens > 0 && row.completionTokens > 0)).toBe(true);
    const conversation = await app.butler.store.conversations.find(encodeConversationKey(address));
    const sum = (pick: (row: (typeof rows)[number]) => number) =>
      rows.reduce((total, row) => total + pick(row), 0);
    expect(sum((row) => row.promptTokens)).toBe(conversation?.promptTokensTotal);
    expect(sum((row) => row.completionTokens)).toBe(conversation?.completionTokensTotal);
  });

  it("counts compaction tokens and prices them at the compaction model's price", async () => {
    const reported: number[] = [];
    model.setFallback((request: RecordedRequest) => {
      // Close to the real size, so that the token scale (and when compaction starts) stays realistic.
      const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
      reported.push(promptTokens);
      return { text: 'Noted.', usage: { promptTokens, completionTokens: 5 } };
    });
    cheap.setFallback({
      text: '- Facts: tickets INC-1 to INC-9 concern the deploy pipeline.',
      usage: { promptTokens: 900, completionTokens: 60 },
    });
    const address = newAddress();
    for (let turn = 0; turn < 12 && cheap.requests.length === 0; turn++)
      await say(app, address, `Ticket INC-${turn}: ${'the deploy pipeline needs another look '.repeat(30)}`);
    expect(cheap.requests.length).toBe(1);

    const rows = await rowsOf(app, address);
    expect(rows.map((row) => row.promptTokens)).toEqual(reported);
    const compacted = rows.filter((row) => row.compactionTokens > 0);
    expect(compacted).toHaveLength(1);
    const [row] = compacted;
    expect(row).toMatchObject({ model: 'test-model', compactionModel: 'cheap-model', compactionTokens: 960 });
    expect(row?.costUsd).toBeCloseTo(
      ((row?.promptTokens ?? 0) * 100 + 5 * 200 + 900 * 10 + 60 * 20) / 1e6,
      12,
    );
    expect(rows.filter((other) => other !== row).every((other) => other.compactionModel === null)).toBe(true);
  });

  it('records tokens without a cost when the model has no price', async () => {
    const address = newAddress();
    model.enqueue({ text: 'Hello.', usage: { promptTokens: 120, completionTokens: 30 } });
    await say(unpriced, address, 'hi');
    const rows = await rowsOf(unpriced, address);
    expect(rows).toMatchObject([
      { model: 'test-model', promptTokens: 120, completionTokens: 30, costUsd: null },
    ]);

    const totals = await unpriced.butler.store.usage.totals({
      conversationKey: encodeConversationKey(address),
      since: startOfToday(),
    });
    expect(totals).toEqual({
      turns: 1,
      promptTokens: 120,
      completionTokens: 30,
      compactionTokens: 0,
      costUsd: null,
    });
  });

  it('rolls up per conversation, workspace, channel, user and day as the sum of the turns', async () => {
    const key = (
      workspace: string,
      channel: string,
      thread: string,
      platform: 'slack' | 'feishu' = 'slack',
    ) => encodeConversationKey({ platform, workspace, channel, thread });
    const row = (
      at: string,
      where: { platform?: 'slack' | 'feishu'; workspace: string; channel: string; thread: string },
      userId: string,
      tokens: [number, number, number],
      costUsd: number | null,
    ): TurnUsageRecord => ({
      turnId: randomUUID(),
      conversationKey: key(where.workspace, where.channel, where.thread, where.platform),
      platform: where.platform ?? 'slack',
      workspace: where.workspace,
      channel: where.channel,
      userId,
      userPlatform: null,
      model: 'test-model',
      compactionModel: tokens[2] > 0 ? 'cheap-model' : null,
      promptTokens: tokens[0],
      completionTokens: tokens[1],
      compactionTokens: tokens[2],
      costUsd,
      at: new Date(at),
    });
    const inWindow = [
      row('2021-03-01T10:00:00Z', { workspace: 'T1', channel: 'C1', thread: 'a' }, 'U1', [100, 10, 0], 0.5),
      row('2021-03-01T23:59:59Z', { workspace: 'T1', channel: 'C1', thread: 'a' }, 'U2', [200, 20, 30], null),
      row('2021-03-02T00:00:00Z', { workspace: 'T1', channel: 'C2', thread: 'b' }, 'U1', [50, 5, 0], 0.25),
      row('2021-03-02T08:00:00Z', { workspace: 'T2', channel: 'C1', thread: 'c' }, 'U3', [400, 40, 0], 1),
      row(
        '2021-03-31T23:00:00Z',
        { platform: 'feishu', workspace: 'W9', channel: 'oc_1', thread: 'd' },
        'U1',
        [10, 1, 0],
        null,
      ),
    ];
    const outside = [
      row('2021-02-28T23:59:59Z', { workspace: 'T1', channel: 'C1', thread: 'a' }, 'U1', [7, 7, 7], 7),
      row('2021-04-01T00:00:00Z', { workspace: 'T1', channel: 'C1', thread: 'a' }, 'U1', [9, 9, 9], 9),
    ];
    for (const entry of [...inWindow, ...outside]) await app.butler.store.usage.record(entry);

    const keyOf: Record<UsageGroup, (entry: TurnUsageRecord) => string> = {
      conversation: (entry) => entry.conversationKey,
      workspace: (entry) => entry.workspace,
      channel: (entry) => `${entry.workspace}/${entry.channel}`,
      user: (entry) => `${entry.platform}:${entry.userId}`,
      day: (entry) => entry.at?.toISOString().slice(0, 10) ?? '',
    };
    const window = { since: new Date('2021-03-01T00:00:00Z'), until: new Date('2021-04-01T00:00:00Z') };
    for (const groupBy of Object.keys(keyOf) as UsageGroup[]) {
      const expected = new Map<string, UsageRollup>();
      for (const entry of inWindow) {
        const groupKey = keyOf[groupBy](entry);
        const sum = expected.get(groupKey) ?? {
          key: groupKey,
          turns: 0,
          promptTokens: 0,
          completionTokens: 0,
          compactionTokens: 0,
          costUsd: null,
        };
        sum.turns += 1;
        sum.promptTokens += entry.promptTokens;
        sum.completionTokens += entry.completionTokens;
        sum.compactionTokens += entry.compactionTokens;
        if (entry.costUsd !== null) sum.costUsd = (sum.costUsd ?? 0) + entry.costUsd;
        expected.set(groupKey, sum);
      }
      const rollup = await app.butler.store.usage.rollup({ groupBy, ...window });
      const byKey = (a: UsageRollup, b: UsageRollup) => a.key.localeCompare(b.key);
      // The costs are binary fractions: sums are exact.
      expect(rollup.sort(byKey), groupBy).toEqual([...expected.values()].sort(byKey));
    }

    const days = await app.butler.store.usage.rollup({ groupBy: 'day', ...window, limit: 2 });
    expect(days.map((entry) => entry.key)).toEqual(['2021-03-31', '2021-03-02']);
    const busiest = await app.butler.store.usage.rollup({ groupBy: 'workspace', ...window, limit: 1 });
    expect(busiest).toMatchObject([{ key: 'T2', turns: 1, promptTokens: 400 }]);

    const conversations = await app.butler.store.usage.byConversation([
      key('T1', 'C1', 'a'),
      key('T2', 'C1', 'c'),
      key('T404', 'C1', 'none'),
    ]);
    expect([...conversations.keys()].sort()).toEqual([key('T1', 'C1', 'a'), key('T2', 'C1', 'c')]);
    // All time: the rows outside the window count too.
    expect(conversations.get(key('T1', 'C1', 'a'))).toMatchObject({
      turns: 4,
      promptTokens: 316,
      completionTokens: 46,
      compactionTokens: 46,
      costUsd: 16.5,
    });
    expect(
      await app.butler.store.usage.totals({ users: [{ platform: 'feishu', id: 'U1' }], since: window.since }),
    ).toEqual({ turns: 1, promptTokens: 10, completionTokens: 1, compactionTokens: 0, costUsd: null });
  });

  it("answers `usage` with the conversation's and the asker's totals, without a model call", async () => {
    const uma = { id: `uma${thread}`, name: 'Uma' };
    const address = newAddress();
    const elsewhere = newAddress('elsewhere');
    model.enqueue(
      { text: 'One.', usage: { promptTokens: 300, completionTokens: 50 } },
      { text: 'Two.', usage: { promptTokens: 200, completionTokens: 100 } },
      { text: 'Three.', usage: { promptTokens: 100, completionTokens: 0 } },
    );
    await say(app, address, 'one', uma);
    await say(app, address, 'two', uma);
    await say(app, elsewhere, 'three', uma, true);
    // Earlier this month (today, on the 1st).
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 0, 0, 1));
    await app.butler.store.usage.record({
      turnId: randomUUID(),
      conversationKey: encodeConversationKey(newAddress('old')),
      platform: 'console',
      workspace: 'local',
      channel: 'old',
      userId: uma.id,
      userPlatform: null,
      model: 'test-model',
      compactionModel: null,
      promptTokens: 10_000,
      completionTokens: 0,
      compactionTokens: 0,
      costUsd: 1,
      at: monthStart,
    });
    const requestsBefore = model.requests.length;

    await say(app, address, 'usage', uma);
    const earlierToday = monthStart.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
    const personToday = earlierToday ? '10,750 tokens ($1.09)' : '750 tokens ($0.09)';
    expect(platform.finalTexts().at(-1)).toBe(
      [
        'This conversation: today 650 tokens ($0.08), this month 650 tokens ($0.08)',
        `You (Uma): today ${personToday}, this month 10,750 tokens ($1.09)`,
      ].join('\n'),
    );
    expect(model.requests).toHaveLength(requestsBefore);
    expect(model.requests.map((request) => request.messages.at(-1)?.content)).not.toContain('usage');

    // The command's own turn is a turn without tokens; in a DM it reads the same way.
    await say(app, elsewhere, 'Usage?', uma, true);
    expect(platform.finalTexts().at(-1)).toMatch(/^This conversation: today 100 tokens \(\$0\.01\)/);
    expect(model.requests).toHaveLength(requestsBefore);
    expect((await rowsOf(app, address)).at(-1)).toMatchObject({
      userId: uma.id,
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
    });
  });

  it('answers `usage` without a cost when nothing is priced', async () => {
    const address = newAddress();
    model.enqueue({ text: 'Hi.', usage: { promptTokens: 1000, completionTokens: 234 } });
    const vic = { id: `vic${thread}`, name: 'Vic' };
    await say(unpriced, address, 'hello', vic);
    await say(unpriced, address, 'usage', vic);
    expect(unpricedPlatform.finalTexts().at(-1)).toBe(
      [
        'This conversation: today 1,234 tokens, this month 1,234 tokens',
        'You (Vic): today 1,234 tokens, this month 1,234 tokens',
      ].join('\n'),
    );
    expect(model.requests).toHaveLength(1);
  });
});
