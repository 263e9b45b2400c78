import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { FakeFeishuApi, type Json } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type McpHttpTestServer, startMcpHttpServer } from '../../helpers/mcp-test-server.js';
import {
  aliceOpenId,
  cardActionEvent,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { buttonCount } from '../feishu/approval-steps.js';
import { approverOpenId, repliesTo, startFeishuButler } from '../feishu/feishu-butler.js';

/**
 * MCP tools gated by Feishu approval cards, through the running Butler: signed webhooks, the real MCP client
 * against the MCP test server over Streamable HTTP, the card callback as Feishu sends it.
 */

let fake: FakeFeishuApi;
let model: FakeModelServer;
let records: McpHttpTestServer;
let app: TestButler;

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
  model = await startFakeModelServer();
  records = await startMcpHttpServer();
  app = await startFeishuButler(fake, model, undefined, {
    config: {
      mcpServers: [
        {
          name: 'records',
          url: records.url,
          timeoutMs: 1_500,
          tools: { include: ['lookup', 'update_record', 'delete_record'] },
        },
      ],
    },
  });
});
afterAll(async () => {
  await app?.close();
  await records.stop();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  model.reset();
  records.calls.length = 0;
});

const webhook = () => `${app.url}/feishu/events`;

interface Thread {
  threadId: string;
  rootId: string;
}

/** Alice asks, in a new thread or in `thread`; returns her message, its thread and the card Butler posted in reply. */
async function ask(text: string, replies: Parameters<FakeModelServer['enqueue']>, thread?: Thread) {
  model.enqueue(...replies);
  const messageId = uniqueId('om_');
  const inThread = thread ?? { threadId: uniqueId('omt_'), rootId: messageId };
  const response = await postToButler(
    webhook(),
    messageEvent({
      messageId,
      threadId: inThread.threadId,
      ...(thread ? { rootId: thread.rootId } : {}),
      text: `@_user_1 ${text}`,
    }),
  );
  expect(response.status).toBe(200);
  await app.settle();
  const card = repliesTo(fake, messageId).find((message) =>
    JSON.stringify(message.content).includes('decision'),
  );
  return { messageId, card, thread: inThread };
}

function click(cardMessageId: string, value: Json, operatorOpenId = approverOpenId) {
  return postToButler(
    webhook().replace('/events', '/card'),
    cardActionEvent({ operatorOpenId, messageId: cardMessageId, value }),
  );
}

function buttonValue(card: Json | undefined, decision: string, key: 'approval_id' | 'batch_id'): Json {
  const id = new RegExp(`"${key}":"([^"]+)","decision":"${decision}"`).exec(JSON.stringify(card))?.[1];
  if (!id) throw new Error(`no ${key} button for ${decision} on the card`);
  return { [key]: id, decision };
}

const toolResults = (request: number) =>
  (model.requests[request]?.messages ?? [])
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));

describe(`MCP tools gated by Feishu cards (${databaseKind})`, () => {
  it('parks a destructive MCP tool on a card naming server and tool, runs it once after approval', async () => {
    const { messageId, card } = await ask('delete r1', [
      { toolCalls: [{ id: 'delete_1', name: 'records__delete_record', arguments: '{"id":"r1"}' }] },
    ]);
    expect(card).toBeDefined();
    const shown = JSON.stringify(card?.content);
    expect(shown).toContain('delete_record');
    expect(shown).toContain('records');
    expect(records.calls).toEqual([]);

    model.enqueue({ text: 'Deleted r1.' });
    const value = buttonValue(card?.content, 'approve', 'approval_id');
    const answer = await click(card?.messageId as string, value);
    expect(answer.status).toBe(200);
    expect(buttonCount(answer.body.card)).toBe(0);
    await app.settle();
    await click(card?.messageId as string, value);
    await app.settle();

    expect(records.calls.map((call) => call.tool)).toEqual(['delete_record']);
    expect(toolResults(1)).toEqual(['deleted r1']);
    const reply = repliesTo(fake, messageId).at(-1);
    expect(fake.visibleText(reply?.messageId as string)).toBe('Deleted r1.');
  });

  it('lists two calls of one step on one card and runs each once after "Approve all"', async () => {
    const { card } = await ask('update r2 and delete r3', [
      {
        toolCalls: [
          { id: 'update_2', name: 'records__update_record', arguments: '{"id":"r2","value":"x"}' },
          { id: 'delete_3', name: 'records__delete_record', arguments: '{"id":"r3"}' },
        ],
      },
    ]);
    expect(card).toBeDefined();
    model.enqueue({ text: 'Both done.' });
    const answer = await click(card?.messageId as string, buttonValue(card?.content, 'approve', 'batch_id'));
    expect(answer.body).toMatchObject({ toast: { type: 'success' } });
    await app.settle();

    expect(records.calls.map((call) => call.tool).sort()).toEqual(['delete_record', 'update_record']);
    expect(model.requests).toHaveLength(2);
    expect(toolResults(1)).toHaveLength(2);
  });

  it('lets a standing approval run the next call in the conversation without a card, but not for the requester', async () => {
    const { card, thread } = await ask('delete r4', [
      { toolCalls: [{ id: 'delete_4', name: 'records__delete_record', arguments: '{"id":"r4"}' }] },
    ]);
    const grant = buttonValue(card?.content, 'approve_for_conversation', 'approval_id');
    const refused = await click(card?.messageId as string, grant, aliceOpenId);
    expect(refused.body).toMatchObject({ toast: { type: 'error' } });
    expect(records.calls).toEqual([]);

    model.enqueue({ text: 'Deleted r4.' });
    const granted = await click(card?.messageId as string, grant);
    expect(JSON.stringify(granted.body)).toContain('Approved for this conversation');
    await app.settle();
    expect(records.calls.map((call) => call.tool)).toEqual(['delete_record']);

    const later = await ask(
      'and r5',
      [
        { toolCalls: [{ id: 'delete_5', name: 'records__delete_record', arguments: '{"id":"r5"}' }] },
        { text: 'Deleted r5.' },
      ],
      thread,
    );
    expect(later.card).toBeUndefined();
    expect(records.calls.map((call) => call.tool)).toEqual(['delete_record', 'delete_record']);
    expect(fake.visibleText(repliesTo(fake, later.messageId).at(-1)?.messageId as string)).toBe(
      'Deleted r5.',
    );
  });
});
