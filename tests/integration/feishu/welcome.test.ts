import { describe, expect, it } from 'vitest';
import { lastUserContent } from '../../helpers/platform-butler.js';
import {
  aliceOpenId,
  cardActionEvent,
  messageEvent,
  postToButler,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { useFeishuButler } from './feishu-butler.js';

/** The welcome card a Feishu direct chat's first message gets, and its prompts, through the running Butler. */

const prompts = ['What can you do?', 'Ping <at id=all></at> for me'];
const suite = useFeishuButler({ config: { feishu: { suggestedPrompts: prompts } } });

const inChat = (chatId: string) => suite.fake.sentMessages().filter((message) => message.chatId === chatId);
const isWelcome = (message: { content: unknown }) => JSON.stringify(message.content).includes('"prompt_0"');

async function directMessage(chatId: string, text: string, answer: string): Promise<void> {
  suite.model.enqueue({ text: answer });
  await postToButler(suite.url, messageEvent({ chatType: 'p2p', chatId, text }));
  await suite.app.settle();
}

const clickPrompt = (chatId: string, messageId: string, prompt: string, eventId: string) =>
  postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({ messageId, chatId, eventId, value: { butler: 'prompt', prompt } }),
  );

describe('Feishu welcome card', () => {
  it('greets a first direct message before the answer; a prompt click is answered as the clicker’s message, once', async () => {
    const chatId = uniqueId('oc_dm_');
    await directMessage(chatId, 'hello', 'Hello Alice.');
    const [welcome, reply, ...rest] = inChat(chatId);
    expect(rest).toEqual([]);
    if (!welcome) throw new Error('Butler sent nothing');
    expect(isWelcome(welcome)).toBe(true);
    expect(reply && isWelcome(reply)).toBe(false);
    const card = JSON.stringify(welcome.content);
    expect(card).toContain('What can you do?');
    // The configured text is shown, but its `<at id=all>` pings nobody.
    const { elements } = (welcome.content as { body: { elements: Array<{ text?: { content: string } }> } })
      .body;
    expect(elements[2]?.text?.content).toBe('Ping <\u200bat id=all></at> for me');
    expect(suite.model.requests).toHaveLength(1);

    suite.model.enqueue({ text: 'I answer questions and run tools.' });
    const eventId = uniqueId('ev_click_');
    const answer = await clickPrompt(chatId, welcome.messageId, 'What can you do?', eventId);
    expect(answer.body).toMatchObject({ toast: { type: 'success' } });
    await suite.app.settle();
    expect(suite.model.requests).toHaveLength(2);
    expect(lastUserContent(suite.model, 1)).toBe('What can you do?');
    expect(inChat(chatId)).toHaveLength(3);

    // Feishu delivers the same click again: it is not a second message.
    await clickPrompt(chatId, welcome.messageId, 'What can you do?', eventId);
    await suite.app.settle();
    expect(suite.model.requests).toHaveLength(2);
    const stored = await suite.app.butler.store.reads.recentConversations(
      { platform: 'feishu', id: aliceOpenId },
      5,
    );
    expect(stored[0]).toMatchObject({ address: { channel: chatId, thread: 'main' } });
  });

  it('does not greet a second direct message, nor a group', async () => {
    const chatId = uniqueId('oc_dm_');
    await directMessage(chatId, 'hello', 'Hello.');
    await directMessage(chatId, 'and again', 'Again.');
    expect(inChat(chatId).filter(isWelcome)).toHaveLength(1);
    expect(inChat(chatId)).toHaveLength(3);

    suite.model.enqueue({ text: 'Hi group.' });
    const groupId = uniqueId('oc_group_');
    await postToButler(suite.url, messageEvent({ chatId: groupId, text: '@_user_1 hello' }));
    await suite.app.settle();
    expect(inChat(groupId).filter(isWelcome)).toHaveLength(0);
  });
});
