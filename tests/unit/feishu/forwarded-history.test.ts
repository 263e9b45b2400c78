import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardedHistoryText } from '../../../src/adapters/feishu/forwarded-history.js';
import type { Logger } from '../../../src/core/contracts/logger.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { feishuClientFor } from '../../helpers/feishu-client.js';
import { aliceOpenId, testTenantKey, uniqueId } from './feishu-events.js';

/** forwardedHistoryText through the real Lark SDK client against the fake Open API. */

let fake: FakeFeishuApi;
beforeAll(async () => {
  fake = await FakeFeishuApi.start();
});
afterAll(() => fake.close());

const quiet: Logger = { error() {}, warn() {}, info() {}, debug() {}, child: () => quiet };

const api = () => feishuClientFor(fake, quiet);

function textItem(upper: string, text: string, createTime: number, sender: Record<string, string> = {}) {
  return {
    message_id: uniqueId('om_'),
    upper_message_id: upper,
    msg_type: 'text',
    create_time: String(createTime),
    sender: {
      id: aliceOpenId,
      id_type: 'open_id',
      sender_type: 'user',
      tenant_key: testTenantKey,
      ...sender,
    },
    body: { content: JSON.stringify({ text }) },
  };
}

function forwardItem(id: string, upper: string, createTime: number) {
  return {
    ...textItem(upper, '', createTime),
    message_id: id,
    msg_type: 'merge_forward',
    body: { content: '' },
  };
}

const asked: string[] = [];
const nameOf = async (openId: string) => {
  asked.push(openId);
  return openId === aliceOpenId ? 'Alice Chen' : undefined;
};

describe('forwardedHistoryText', () => {
  it('reads at most 100 messages and says how many more there were', async () => {
    const id = uniqueId('om_');
    fake.messageItems.set(id, [
      { message_id: id, msg_type: 'merge_forward' },
      ...Array.from({ length: 130 }, (_, index) => textItem(id, `line ${index}`, index)),
    ]);
    const lines = (await forwardedHistoryText(api(), id, nameOf, quiet)).split('\n');
    expect(lines[0]).toBe('[forwarded a chat history:]');
    expect(lines.slice(1, 3)).toEqual(['Alice Chen: line 0', 'Alice Chen: line 1']);
    expect(lines.filter((line) => line.startsWith('Alice Chen: '))).toHaveLength(100);
    expect(lines.at(-1)).toBe('[… and 30 more forwarded messages, not shown]');
  });

  it('stops at about 12,000 characters of text', async () => {
    const id = uniqueId('om_');
    fake.messageItems.set(
      id,
      Array.from({ length: 10 }, (_, index) => textItem(id, 'x'.repeat(3_000), index)),
    );
    const text = await forwardedHistoryText(api(), id, nameOf, quiet);
    expect(text.split('\n').filter((line) => line.startsWith('Alice Chen: '))).toHaveLength(4);
    expect(text).toContain('[… and 6 more forwarded messages, not shown]');
  });

  it("reads forwards inside forwards three deep, prefers the name Feishu gave, and keeps unknown ids and apps' ids", async () => {
    const [top, second, third] = [uniqueId('om_'), uniqueId('om_'), uniqueId('om_')];
    fake.messageItems.set(top, [
      textItem(top, 'top', 1, { sender_name: 'Alice (from Feishu)' }),
      forwardItem(second, top, 2),
      textItem(second, 'second', 3, { id: 'ou_unknown' }),
      forwardItem(third, second, 4),
      textItem(third, 'third', 5),
      forwardItem(uniqueId('om_'), third, 6),
      textItem(top, 'build green', 7, { id: 'cli_ci_bot', id_type: 'app_id', sender_type: 'app' }),
    ]);
    expect(await forwardedHistoryText(api(), top, nameOf, quiet)).toBe(
      [
        '[forwarded a chat history:]',
        'Alice (from Feishu): top',
        'Alice Chen: [forwarded a chat history]',
        '  ou_unknown: second',
        '  Alice Chen: [forwarded a chat history]',
        '    Alice Chen: third',
        '    Alice Chen: [forwarded a chat history, which Butler cannot open]',
        'cli_ci_bot: build green',
      ].join('\n'),
    );
    expect(asked).not.toContain('cli_ci_bot');
  });

  it('says so when the forward holds nothing Feishu lists', async () => {
    const id = uniqueId('om_');
    fake.messageItems.set(id, [{ message_id: id, msg_type: 'merge_forward' }]);
    expect(await forwardedHistoryText(api(), id, nameOf, quiet)).toBe('[forwarded an empty chat history]');
  });
});
