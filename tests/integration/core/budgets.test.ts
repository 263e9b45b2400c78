import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ChatUser, ConversationAddress } from '../../../src/core/contracts/events.js';
import { auditLog, budgetNotices, turnUsage } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * Budgets in a running Butler, over the scripted model: a spent `approve` budget parks the turn on an
 * approver's card, a `stop` budget answers without the model, warnings come once, sub-agents' tokens count
 * and a person's budget is theirs alone, through every identity of theirs (`people:`). Each test has its own
 * channel, so its budget starts empty.
 */

const ana = { id: 'ana', name: 'Ana' };
const ben = { id: 'ben', name: 'Ben' };
const olga = { id: 'olga', name: 'Olga' };
const uma = { id: 'uma', name: 'Uma' };
const vera = { id: 'vera', name: 'Vera' };
const veraOnFeishu = { id: 'ou_vera', name: 'Vera' };

/** USD per million tokens: 1,000 prompt tokens cost $0.10. */
const pricing = { 'test-model': { input: 100, output: 200 } };

const channelBudget = (id: string, extra: Record<string, unknown>) => ({
  scope: 'channel',
  platform: 'console',
  id,
  name: `#${id}`,
  tokensPerDay: 1000,
  ...extra,
});

const adminKey = 'admin-budgets-key-0123456789';

let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let feishu: RecordingAdapter;
let app: TestButler;
let thread = 0;

beforeAll(async () => {
  model = await startFakeModelServer();
  toolServer = await startToolServer();
  platform = new RecordingAdapter();
  feishu = new RecordingAdapter('feishu');
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model', KEY_ADMIN: adminKey },
    config: {
      pricing,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      api: { keys: [{ name: 'admin', key: '${KEY_ADMIN}', scopes: ['read'] }] },
      approvers: { console: ['olga'] },
      tools: [
        {
          name: 'scale_service',
          description: 'Scale a service.',
          risk: 'medium',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${toolServer.url}/scale_service` },
        },
      ],
      agents: [
        { name: 'docs', description: 'Answers from the handbook.', instructions: 'Read the handbook.' },
      ],
      budgets: [
        channelBudget('ops', { onExceeded: 'approve' }),
        channelBudget('warn', { warnAt: [0.5, 0.9], onExceeded: 'approve' }),
        channelBudget('quiet', { onExceeded: 'stop' }),
        channelBudget('agents', { tokensPerDay: 20_000, onExceeded: 'stop' }),
        channelBudget('later', { tokensPerDay: 20_000, onExceeded: 'approve' }),
        channelBudget('report', { warnAt: [0.5], costPerMonth: 10, onExceeded: 'stop' }),
        { scope: 'user', platform: 'console', id: 'uma', tokensPerDay: 500 },
        { scope: 'user', platform: 'console', id: vera.id, tokensPerDay: 500 },
      ],
      people: [{ name: 'vera', console: vera.id, feishu: veraOnFeishu.id }],
    },
    adapters: [platform, feishu],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await toolServer.close();
});
beforeEach(() => model.reset());

function newAddress(channel: string): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel, thread: `b${thread}` };
}

async function say(address: ConversationAddress, text: string, user: ChatUser = ana) {
  await app.butler.service.accept(inboundMessage({ text, address, user, isDirect: false }));
  await app.settle();
}

const decide = (
  approvalId: string,
  user: ChatUser,
  decision: 'approve' | 'reject' | 'approve_for_conversation',
) => app.butler.service.decide({ approvalId, platform: 'console', user, decision });

const auditOf = (address: ConversationAddress) =>
  app.butler.database.db
    .select()
    .from(auditLog)
    .where(eq(auditLog.conversationKey, encodeConversationKey(address)))
    .orderBy(asc(auditLog.id));

describe(`budgets on ${databaseKind}`, () => {
  it('parks a turn past a channel budget on a card an approver (not the requester) decides, then answers', async () => {
    model.enqueue({ text: 'One.', usage: { promptTokens: 900, completionTokens: 200 } });
    await say(newAddress('ops'), 'first question');
    expect(platform.finalTexts().at(-1)).toBe('One.');

    const address = newAddress('ops');
    const cardsBefore = platform.cards.length;
    await say(address, 'second question');
    expect(model.requests).toHaveLength(1);
    expect(platform.cards).toHaveLength(cardsBefore + 1);
    const { card } = platform.lastCard();
    expect(card.calls).toHaveLength(1);
    const [call] = card.calls;
    expect(call).toMatchObject({ toolName: 'continue_over_budget', risk: 'high', status: 'pending' });
    expect(call?.summary).toBe(
      [
        '#ops has used its 1,000 tokens for today; approve to continue this answer.',
        '#ops is at 110% of its 1,000 tokens for today; continuing is estimated at about 1,100 tokens ($0.13), the average turn there today.',
      ].join('\n'),
    );
    // The override is for this answer only: nobody may approve it for the conversation.
    expect(card.standingApprovalHours).toBeUndefined();
    const approvalId = call?.approvalId ?? '';

    expect(await decide(approvalId, ana, 'approve')).toMatchObject({ ok: false, code: 'not_authorized' });
    expect(await decide(approvalId, olga, 'approve_for_conversation')).toMatchObject({
      ok: false,
      code: 'not_authorized',
    });
    await app.settle();
    expect(model.requests).toHaveLength(1);

    model.enqueue({ text: 'Two, past the budget.', usage: { promptTokens: 10, completionTokens: 5 } });
    expect(await decide(approvalId, olga, 'approve')).toMatchObject({ ok: true });
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(platform.finalTexts().at(-1)).toBe('Two, past the budget.');
    // The question reached the model: the parked turn's messages were kept.
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('second question');
    expect(await auditOf(address)).toMatchObject([
      { toolName: 'continue_over_budget', decision: 'approved', outcome: 'succeeded', decidedBy: 'olga' },
    ]);

    // A later turn is checked again, and a rejection ends it without the model.
    const later = newAddress('ops');
    await say(later, 'third question');
    const again = platform.lastCard().card.calls[0];
    expect(again?.toolName).toBe('continue_over_budget');
    await decide(again?.approvalId ?? '', olga, 'reject');
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(platform.finalTexts().at(-1)).toBe(
      'I stopped here. #ops has used its 1,000 tokens for today, and Olga did not approve going on.',
    );
    expect(await auditOf(later)).toMatchObject([
      { toolName: 'continue_over_budget', decision: 'rejected', outcome: 'not_run' },
    ]);
  });

  it('checks the continuation after an approval too: spent meanwhile, it waits for an override first', async () => {
    model.enqueue(
      { text: 'Scaling.', toolCalls: [{ name: 'scale_service', arguments: '{"service":"api"}' }] },
      { text: 'A big answer.', usage: { promptTokens: 20_000, completionTokens: 1_000 } },
    );
    const parked = newAddress('later');
    await say(parked, 'scale api');
    const toolCard = platform.lastCard().card;
    expect(toolCard.calls[0]?.toolName).toBe('scale_service');
    // Elsewhere in the channel, the day's budget is spent while the card waits.
    await say(newAddress('later'), 'write a lot');
    expect(model.requests).toHaveLength(2);

    await decide(toolCard.calls[0]?.approvalId ?? '', olga, 'approve');
    await app.settle();
    expect(toolServer.requests.map((request) => request.path)).toContain('/scale_service');
    expect(model.requests).toHaveLength(2);
    const override = platform.lastCard();
    expect(override.target.address).toEqual(parked);
    expect(override.card.calls[0]?.summary).toMatch(
      /^#later has used its 20,000 tokens for today; approve to continue this answer\.\n/,
    );

    model.enqueue({ text: 'Scaled api.', usage: { promptTokens: 10, completionTokens: 5 } });
    await decide(override.card.calls[0]?.approvalId ?? '', olga, 'approve');
    await app.settle();
    expect(model.requests).toHaveLength(3);
    expect(platform.finalTexts().at(-1)).toBe('Scaled api.');
    // The tool's result reached the model with the question: the parked continuation's messages were kept.
    expect(JSON.stringify(model.requests[2]?.messages)).toContain('scale_service');
  });

  it('posts a warning once per threshold, and cards of a turn near the budget estimate the cost of continuing', async () => {
    const noticesBefore = platform.notices.length;
    model.enqueue(
      { text: 'One.', usage: { promptTokens: 500, completionTokens: 100 } },
      { text: 'Two.', usage: { promptTokens: 80, completionTokens: 20 } },
      { text: 'Scaling.', toolCalls: [{ name: 'scale_service', arguments: '{"service":"api"}' }] },
    );
    const first = newAddress('warn');
    await say(first, 'one');
    await say(first, 'two');
    await say(newAddress('warn'), 'three');

    const notices = platform.notices.slice(noticesBefore);
    expect(notices.map((notice) => notice.text)).toEqual([
      '#warn has used 60% of its 1,000 tokens for today.',
    ]);
    expect(notices[0]?.target.address).toEqual(first);
    const claimed = await app.butler.database.db
      .select()
      .from(budgetNotices)
      .where(eq(budgetNotices.budget, 'channel:console:warn'));
    expect(claimed).toMatchObject([{ limitName: 'tokensPerDay', threshold: 0.5 }]);
    // Another process gets there second: the note is not its to post.
    const [row] = claimed;
    expect(
      await app.butler.store.budgets.claimNotice({
        budget: 'channel:console:warn',
        limit: 'tokensPerDay',
        period: row?.period ?? '',
        threshold: 0.5,
        conversationKey: 'elsewhere',
      }),
    ).toBe(false);
    // Notes are kept past their period; pruning takes only older ones.
    expect(await app.butler.store.budgets.pruneNotices(new Date(Date.now() - 35 * 86_400_000))).toBe(0);
    expect(await app.butler.store.budgets.pruneNotices(new Date(Date.now() + 60_000))).toBeGreaterThan(0);

    expect(platform.lastCard().card.calls[0]?.summary).toBe(
      [
        'Scale a service (service=api)',
        '#warn is at 70% of its 1,000 tokens for today; continuing is estimated at about 350 tokens ($0.04), the average turn there today.',
      ].join('\n'),
    );
  });

  it('answers that a stop budget is spent without calling the model, compaction tokens included', async () => {
    model.enqueue({ text: 'One.', usage: { promptTokens: 600, completionTokens: 100 } });
    const address = newAddress('quiet');
    await say(address, 'one');
    // A turn that folded history into the summary: its compaction tokens count too.
    await app.butler.store.usage.record({
      turnId: 'compacting-turn',
      conversationKey: encodeConversationKey(address),
      platform: 'console',
      workspace: 'local',
      channel: 'quiet',
      userId: 'ana',
      userPlatform: null,
      model: 'test-model',
      compactionModel: 'test-model',
      promptTokens: 0,
      completionTokens: 0,
      compactionTokens: 300,
      costUsd: 0.03,
    });
    const cardsBefore = platform.cards.length;
    await say(address, 'two');
    expect(model.requests).toHaveLength(1);
    expect(platform.cards).toHaveLength(cardsBefore);
    expect(platform.finalTexts().at(-1)).toBe(
      '#quiet has used its 1,000 tokens for today; ask an admin to raise the budget.',
    );
  });

  it("counts a sub-agent's tokens toward the channel's budget", async () => {
    model.enqueue(
      {
        toolCalls: [
          { name: 'delegate', arguments: JSON.stringify({ agent: 'docs', task: 'Find the runbook.' }) },
        ],
      },
      { text: 'The runbook is in the wiki.', usage: { promptTokens: 40_000, completionTokens: 2_000 } },
      { text: 'Docs says: the wiki.', usage: { promptTokens: 50, completionTokens: 10 } },
    );
    const address = newAddress('agents');
    await say(address, 'where is the runbook?');
    expect(platform.finalTexts().at(-1)).toMatch(/Docs says: the wiki\.$/);
    const [usage] = await app.butler.database.db
      .select()
      .from(turnUsage)
      .where(eq(turnUsage.conversationKey, encodeConversationKey(address)));
    expect(usage?.promptTokens).toBeGreaterThan(40_050);

    await say(address, 'and the on-call list?');
    expect(model.requests).toHaveLength(3);
    expect(platform.finalTexts().at(-1)).toBe(
      '#agents has used its 20,000 tokens for today; ask an admin to raise the budget.',
    );
  });

  it("caps one person's spending and not another's in the same channel", async () => {
    model.enqueue(
      { text: 'For Uma.', usage: { promptTokens: 500, completionTokens: 100 } },
      { text: 'For Ben.', usage: { promptTokens: 500, completionTokens: 100 } },
      { text: 'Ben again.', usage: { promptTokens: 500, completionTokens: 100 } },
    );
    const address = newAddress('shared');
    await say(address, 'hello', uma);
    await say(address, 'hello', ben);
    await say(address, 'and again', uma);
    expect(platform.finalTexts().at(-1)).toBe(
      'Uma has used their 500 tokens for today; ask an admin to raise the budget.',
    );
    await say(address, 'and again', ben);
    expect(platform.finalTexts().at(-1)).toBe('Ben again.');
    expect(model.requests).toHaveLength(3);
  });

  it("caps a person's spending through every identity of theirs, on every platform", async () => {
    model.enqueue(
      { text: 'For Vera.', usage: { promptTokens: 500, completionTokens: 100 } },
      { text: 'Not reached.' },
    );
    await say(newAddress('vera'), 'hello', vera);
    const onFeishu = { platform: 'feishu' as const, workspace: 'tenant', channel: 'oc_vera', thread: 'main' };
    await say(onFeishu, 'and on Feishu', veraOnFeishu);
    expect(feishu.finalTexts().at(-1)).toBe(
      'Vera has used their 500 tokens for today; ask an admin to raise the budget.',
    );
    await say(onFeishu, 'usage', veraOnFeishu);
    // `usage` tells her what she spent on either platform, and where her budget stands.
    expect(feishu.finalTexts().at(-1)).toContain('You (Vera): today 600 tokens');
    expect(feishu.finalTexts().at(-1)).toContain('Vera has used 120% of their 500 tokens for today');
    expect(model.requests).toHaveLength(1);
  });

  it('says where each budget stands, in chat to `usage` and over the API', async () => {
    model.enqueue({ text: 'Reported.', usage: { promptTokens: 500, completionTokens: 100 } });
    const address = newAddress('report');
    await say(address, 'the weekly report');
    await say(address, 'usage');
    expect(platform.finalTexts().at(-1)).toMatch(
      /\n#report has used 60% of its 1,000 tokens for today \(600 tokens\)\.\n#report has used 0% of its \$10\.00 for this month \(\$0\.07\)\.$/,
    );
    expect(model.requests).toHaveLength(1);

    const budgets = (url: string, key?: string) =>
      fetch(`${app.url}/api/v1${url}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
    expect((await budgets('/budgets')).status).toBe(401);
    const { items } = (await (await budgets('/budgets', adminKey)).json()) as {
      items: Array<Record<string, unknown>>;
    };
    const today = new Date().toISOString().slice(0, 10);
    expect(items.filter((item) => item.id === 'report')).toEqual([
      {
        scope: 'channel',
        platform: 'console',
        id: 'report',
        name: '#report',
        limit: 'tokensPerDay',
        max: 1000,
        used: 600,
        fraction: 0.6,
        period: today,
        warnAt: [0.5],
        onExceeded: 'stop',
      },
      // 500 prompt and 100 completion tokens at $100 and $200 per million.
      expect.objectContaining({
        limit: 'costPerMonth',
        max: 10,
        used: expect.closeTo(0.07, 6),
        period: today.slice(0, 7),
      }),
    ]);
    // A budget without a name is named by its scope and id.
    expect(items.find((item) => item.id === 'uma')).toMatchObject({ name: 'user uma', scope: 'user' });
  });
});
