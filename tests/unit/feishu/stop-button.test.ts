import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cardBodyBytes } from '../../../src/adapters/feishu/card-limits.js';
import { createCardkitHealth } from '../../../src/adapters/feishu/cardkit-health.js';
import { createFeishuChatAdapter } from '../../../src/adapters/feishu/chat-adapter.js';
import { markdownCard, replyCardBodyBytes, streamingCard } from '../../../src/adapters/feishu/reply-cards.js';
import { parseStopValue, stopValueFor, withStopButton } from '../../../src/adapters/feishu/stop-button.js';
import { defaultStreamSettings } from '../../../src/adapters/feishu/stream-settings.js';
import { FeishuUserNames } from '../../../src/adapters/feishu/user-names.js';
import type { ReplyTarget } from '../../../src/core/contracts/adapter.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { FakeFeishuApi, type Json } from '../../helpers/fake-feishu-api.js';
import { refuseCardShape } from '../../helpers/fake-feishu-card-rules.js';
import { feishuClientFor } from '../../helpers/feishu-client.js';
import { waitFor } from '../../helpers/wait-for.js';

const group: ConversationAddress = {
  platform: 'feishu',
  workspace: 'tenant',
  channel: 'oc_team',
  thread: 'omt_topic7',
};

describe('the Stop button of a Feishu reply card', () => {
  it('is a card JSON 2.0 callback button naming the thread, below the reply, that the fake Feishu accepts', () => {
    const card = withStopButton(streamingCard('hi'), stopValueFor(group));
    expect(card).toMatchObject({
      schema: '2.0',
      config: { streaming_mode: true },
      body: {
        elements: [
          { tag: 'markdown', element_id: 'reply', content: 'hi' },
          {
            tag: 'button',
            element_id: 'stop',
            text: { tag: 'plain_text', content: 'Stop' },
            behaviors: [{ type: 'callback', value: { butler: 'stop', thread: 'omt_topic7' } }],
          },
        ],
      },
    });
    expect(refuseCardShape(card)).toBeUndefined();
    expect(refuseCardShape(withStopButton(card, stopValueFor(group)))?.body).toMatchObject({
      msg: 'invalid card: duplicate element_id',
    });
    // The plain builders stay as they were.
    expect(streamingCard('hi')).not.toHaveProperty('body.elements.1');
    expect(stopValueFor({ ...group, thread: 'main' })).toEqual({
      butler: 'stop',
      thread: 'main',
      direct: true,
    });
  });

  it('reads back only its own values', () => {
    expect(parseStopValue({ butler: 'stop', thread: 'omt_topic7' })).toEqual(stopValueFor(group));
    expect(parseStopValue({ butler: 'stop', thread: 'main', direct: true })).toMatchObject({ direct: true });
    expect(parseStopValue({ butler: 'stop', thread: 'om_1', direct: 'yes' })).toEqual({
      butler: 'stop',
      thread: 'om_1',
    });
    expect(parseStopValue({ butler: 'stop' })).toBeUndefined();
    expect(parseStopValue({ approval_id: 'a', decision: 'approve' })).toBeUndefined();
    expect(parseStopValue('{"butler":"stop","thread":"main"}')).toBeUndefined();
  });

  it('counts in the card size budget', () => {
    const content = 'ab'.repeat(500);
    const withButton = withStopButton(
      markdownCard(content),
      stopValueFor({ ...group, thread: `om_${'f'.repeat(32)}` }),
    );
    expect(replyCardBodyBytes(content)).toBeGreaterThanOrEqual(cardBodyBytes(withButton));
    expect(replyCardBodyBytes(content)).toBeGreaterThan(cardBodyBytes(markdownCard(content)) + 150);
  });
});

let fake: FakeFeishuApi;

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
});
afterAll(() => fake.close());
afterEach(() => fake.restore());

function openReply() {
  const api = feishuClientFor(fake, silentLogger);
  const adapter = createFeishuChatAdapter({
    api,
    logger: silentLogger,
    now: Date.now,
    settings: { ...defaultStreamSettings, patchIntervalMilliseconds: 200 },
    cardkit: createCardkitHealth(),
    names: new FeishuUserNames(api, silentLogger),
  });
  const target: ReplyTarget = { address: group, replyTo: `om_user_${Date.now()}`, userId: 'ou_alice' };
  return adapter.openReply(target);
}

const stopShown = (messageId: string): Json | undefined => fake.buttonValue(messageId, 'stop');

describe.each([
  ['CardKit', false],
  ['patch', true],
])('a streaming Feishu reply (%s)', (_mode, cardkitDown) => {
  it('shows Stop while Butler writes and not once the reply is finished', async () => {
    if (cardkitDown) fake.cardkitUnavailable();
    const stream = await openReply();
    await stream.append('first words ');
    const messageId = await waitFor(() => stream.messageIds[0]);
    expect(stopShown(messageId)).toEqual({ butler: 'stop', thread: 'omt_topic7' });
    await stream.append('and more');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stopShown(messageId)).toBeDefined();

    await stream.finish('first words and more');
    expect(stopShown(messageId)).toBeUndefined();
    expect(fake.visibleText(messageId)).toBe('first words and more');
    expect(stream.messageIds).toEqual([messageId]);
  });

  it('never shows Stop on a reply finished before its first card', async () => {
    if (cardkitDown) fake.cardkitUnavailable();
    const before = fake.calls.length;
    const stream = await openReply();
    await stream.append('done');
    await stream.finish('done');
    const [messageId] = stream.messageIds;
    expect(stopShown(messageId as string)).toBeUndefined();
    const calls = fake.calls.slice(before);
    expect(calls.some((call) => call.body !== undefined)).toBe(true);
    for (const call of calls) expect(JSON.stringify(call.body ?? {})).not.toContain('butler');
    expect(calls.filter((call) => call.method === 'DELETE')).toEqual([]);
  });
});
