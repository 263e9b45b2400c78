import type { Json } from '../../helpers/fake-feishu-api.js';
import { cardActionEvent, messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { approverOpenId, type FeishuSuite, repliesTo } from './feishu-butler.js';

/** The steps of an approval as Feishu users take them: ask for something risky, then click the card. */

export interface PendingApproval {
  userMessageId: string;
  cardMessageId: string;
  approvalId: string;
  card: Json;
}

export function buttonCount(card: unknown): number {
  return JSON.stringify(card).match(/"tag":"button"/g)?.length ?? 0;
}

/** Alice asks in a thread; the model wants restart_service (high risk); Butler posts a card and parks the turn. */
export async function requestRestart(suite: FeishuSuite): Promise<PendingApproval> {
  suite.model.enqueue({
    toolCalls: [
      { id: `call_${Date.now()}`, name: 'restart_service', arguments: '{"service":"payments-api"}' },
    ],
  });
  const userMessageId = uniqueId('om_');
  await postToButler(
    suite.url,
    messageEvent({
      messageId: userMessageId,
      threadId: uniqueId('omt_'),
      text: '@_user_1 restart payments-api',
    }),
  );
  await suite.app.settle();
  const card = repliesTo(suite.fake, userMessageId).find((message) =>
    JSON.stringify(message.content).includes('approval_id'),
  );
  if (!card) throw new Error('no approval card was posted');
  const approvalId = /"approval_id":"([^"]+)"/.exec(JSON.stringify(card.content))?.[1];
  if (!approvalId) throw new Error('card without an approval id');
  return { userMessageId, cardMessageId: card.messageId, approvalId, card: card.content };
}

export function clickCard(
  suite: FeishuSuite,
  pending: PendingApproval,
  decision: 'approve' | 'reject',
  operatorOpenId = approverOpenId,
) {
  return postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({
      operatorOpenId,
      messageId: pending.cardMessageId,
      value: { approval_id: pending.approvalId, decision },
    }),
  );
}
