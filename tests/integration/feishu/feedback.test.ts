import { describe, expect, it } from 'vitest';
import { cardActionEvent, messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

/** 👍 / 👎 on Butler's finished reply cards, clicked through the running Butler against the fake Open API. */

const suite = useFeishuButler();

async function askAndAnswer(): Promise<{ replyId: string; cardJson: string }> {
  suite.model.enqueue({ text: 'Payments is healthy.' });
  const messageId = uniqueId('om_');
  await postToButler(suite.url, messageEvent({ messageId, text: '@_user_1 how is payments?' }));
  await suite.app.settle();
  const [reply] = repliesTo(suite.fake, messageId);
  if (!reply) throw new Error('Butler did not reply');
  const cardId = (reply.content.data as { card_id: string }).card_id;
  return { replyId: reply.messageId, cardJson: JSON.stringify(suite.fake.cards.get(cardId)?.card) };
}

const click = (replyId: string, feedback: 'positive' | 'negative') =>
  postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({ messageId: replyId, chatId: 'oc_group_chat', value: { feedback } }),
  );

const ratingsOf = async (replyId: string) =>
  (await suite.app.butler.store.feedback.list({ limit: 50 })).items.filter(
    (item) => item.messageId === replyId,
  );

describe('Feishu feedback', () => {
  it('the finished card gets 👍 / 👎; a click is stored and toasted to the clicker', async () => {
    const { replyId, cardJson } = await askAndAnswer();
    expect(cardJson).toContain('"feedback":"positive"');
    expect(cardJson).toContain('"feedback":"negative"');

    const answer = await click(replyId, 'positive');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ toast: { type: 'success' } });
    const [rating] = await ratingsOf(replyId);
    expect(rating).toMatchObject({ rating: 'positive', rater: { platform: 'feishu' } });
    expect(rating?.conversationKey).toMatch(/^feishu:/);
  });

  it('a second click changes the rating rather than adding one', async () => {
    const { replyId } = await askAndAnswer();
    await click(replyId, 'positive');
    await click(replyId, 'negative');
    const ratings = await ratingsOf(replyId);
    expect(ratings.map((item) => item.rating)).toEqual(['negative']);
  });

  it('a click on a card that is not a Butler reply stores nothing', async () => {
    const replyId = uniqueId('om_');
    const answer = await click(replyId, 'positive');
    expect(answer.body).toMatchObject({ toast: { type: 'info' } });
    expect(await ratingsOf(replyId)).toEqual([]);
  });
});
