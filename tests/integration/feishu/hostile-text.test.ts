import { describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { databaseKind } from '../../helpers/database.js';
import { hostileCases, refuseInboxWrites } from '../../helpers/hostile-text.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { lastUserContent } from '../../helpers/platform-butler.js';
import { messageEvent, postToButler, testTenantKey, uniqueId } from '../../unit/feishu/feishu-events.js';
import { useFeishuButler } from './feishu-butler.js';

/** Hostile text in Feishu direct messages: answered, kept (cleaned), and never logged at the default level. */

const logs = captureLogs();
const suite = useFeishuButler({ logLevel: 'info', logDestination: logs.stream });
const cases = hostileCases('feishu');

function repliesIn(chatId: string): string[] {
  return [...suite.fake.messages.values()]
    .filter((message) => message.chatId === chatId)
    .map((message) => suite.fake.visibleText(message.messageId));
}

describe(`hostile text on Feishu (${databaseKind})`, () => {
  it.each(cases)('answers and keeps a direct message carrying $name', async (hostile) => {
    suite.model.enqueue({ text: 'Noted.' });
    const chatId = uniqueId('oc_p2p_');
    const answer = await postToButler(
      suite.url,
      messageEvent({ chatType: 'p2p', chatId, text: hostile.text }),
    );
    expect(answer.status).toBe(200);
    await suite.app.settle();

    expect(lastUserContent(suite.model, 0)).toContain(hostile.cleaned);
    expect(repliesIn(chatId)).toEqual(['Noted.']);
    const key = encodeConversationKey({
      platform: 'feishu',
      workspace: testTenantKey,
      channel: chatId,
      thread: 'main',
    });
    const conversation = await suite.app.butler.store.conversations.find(key);
    const window = await suite.app.butler.store.conversations.window(conversation?.id ?? '');
    expect(window.map((message) => message.content)).toEqual([hostile.cleaned, 'Noted.']);
  });

  it('answers 500 while the database refuses writes, then takes the redelivery', async () => {
    const [hostile] = cases;
    if (!hostile) throw new Error('no hostile case');
    const chatId = uniqueId('oc_p2p_');
    const event = messageEvent({ chatType: 'p2p', chatId, text: `${hostile.text} outage` });
    const restore = await refuseInboxWrites(suite.app);
    const refused = await postToButler(suite.url, event);
    await restore();
    expect(refused.status).toBe(500);
    expect(JSON.stringify(logs.records().find((line) => line.msg === 'request failed'))).toMatch(
      /inbox insert.*P0001/,
    );

    suite.model.enqueue({ text: 'Back.' });
    expect((await postToButler(suite.url, event)).status).toBe(200);
    await suite.app.settle();
    expect(repliesIn(chatId)).toEqual(['Back.']);
  });

  // Runs last: every case above has been logged by then.
  it('never writes message text into the log at the default level', () => {
    expect(logs.text()).toContain('Feishu message received');
    for (const hostile of cases) expect(logs.text()).not.toContain(hostile.marker);
  });
});
