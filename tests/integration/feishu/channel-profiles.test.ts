import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLog } from '../../../src/storage/schema.js';
import { databaseKind } from '../../helpers/database.js';
import type { RecordedRequest } from '../../helpers/fake-model-server.js';
import { messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { clickCard } from './approval-steps.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

/**
 * Channel profiles through the running Butler on Feishu, with the real Lark SDK: the docs group chat gets its
 * persona and its tools only, a call to another tool is refused and audited with the profile, and another group
 * keeps the defaults.
 */

const docsChat = 'oc_docs0000000000000000000000000001';
const otherChat = 'oc_group_chat';

const suite = useFeishuButler({
  config: {
    channels: [
      {
        name: 'docs-desk',
        platform: 'feishu',
        id: docsChat,
        instructions: 'You are the docs desk: answer from the handbook.',
        tools: ['restart_*'],
      },
    ],
  },
});

const systemPrompt = (request: RecordedRequest | undefined) =>
  String(request?.messages.find((message) => message.role === 'system')?.content ?? '');
const offered = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((tool) => (tool.function as { name: string }).name);

/** Someone mentions Butler in a group chat; returns the message's id once the turn is over. */
async function mention(chatId: string, text: string): Promise<string> {
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, chatId, text: `@_user_1 ${text}` }));
  await suite.app.settle();
  return messageId;
}

describe(`channel profiles on Feishu (${databaseKind})`, () => {
  it("gives the docs group its instructions and only its tools; another group keeps Butler's", async () => {
    suite.model.enqueue({ text: 'See the handbook.' });
    const asked = await mention(docsChat, 'where are the docs?');
    const [docs] = suite.model.requests;
    expect(systemPrompt(docs)).toContain('You are the docs desk: answer from the handbook.');
    expect(offered(docs)).toEqual(['restart_service']);
    const [reply] = repliesTo(suite.fake, asked);
    expect(suite.fake.visibleText(reply?.messageId ?? '')).toBe('See the handbook.');

    suite.model.enqueue({ text: 'Hello.' });
    await mention(otherChat, 'hello');
    const general = suite.model.requests[1];
    expect(systemPrompt(general)).not.toContain('docs desk');
    expect(offered(general)).toEqual(
      expect.arrayContaining(['restart_service', 'scale_service', 'remember']),
    );
  });

  it('refuses a call to a tool outside the profile, audited with the profile, and runs nothing', async () => {
    const callId = uniqueId('call_outside_');
    suite.model.enqueue(
      { toolCalls: [{ id: callId, name: 'scale_service', arguments: '{"service":"docs-site"}' }] },
      { text: 'I cannot scale services here.' },
    );
    const asked = await mention(docsChat, 'scale docs-site');
    expect(suite.tools.requests).toHaveLength(0);
    const toolResult = suite.model.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolResult?.content)).toContain('unknown tool "scale_service"');
    const [row] = await suite.app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.toolCallId, callId));
    expect(row).toMatchObject({ decision: 'invalid', outcome: 'not_run', profile: 'docs-desk' });
    const replies = repliesTo(suite.fake, asked);
    expect(replies.some((message) => JSON.stringify(message.content).includes('approval_id'))).toBe(false);
    expect(suite.fake.visibleText(replies.at(-1)?.messageId ?? '')).toBe('I cannot scale services here.');
  });

  it('lets another group call the same tool: it asks for approval there, and runs audited without a profile', async () => {
    const callId = uniqueId('call_general_');
    suite.model.enqueue({
      toolCalls: [{ id: callId, name: 'scale_service', arguments: '{"service":"search"}' }],
    });
    const userMessageId = await mention(otherChat, 'scale search');
    const card = repliesTo(suite.fake, userMessageId).find((message) =>
      JSON.stringify(message.content).includes('approval_id'),
    );
    if (!card) throw new Error('no approval card in the other group');
    expect(JSON.stringify(card.content)).toContain('scale_service');
    const approvalId = /"approval_id":"([^"]+)"/.exec(JSON.stringify(card.content))?.[1] ?? '';
    suite.model.enqueue({ text: 'search scaled.' });
    const pending = { userMessageId, cardMessageId: card.messageId, approvalId, card: card.content };
    expect((await clickCard(suite, pending, 'approve')).body.toast).toMatchObject({ type: 'success' });
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(1);
    const [row] = await suite.app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.toolCallId, callId));
    expect(row).toMatchObject({ decision: 'approved', outcome: 'succeeded', profile: null });
  });
});
