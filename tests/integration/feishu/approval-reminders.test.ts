import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ageRequest, hour } from '../../helpers/approval-clock.js';
import { databaseKind } from '../../helpers/database.js';
import type { FakeMessage } from '../../helpers/fake-feishu-api.js';
import { waitFor, waitForAsync } from '../../helpers/wait-for.js';
import { cardActionEvent, messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { buttonCount } from './approval-steps.js';
import { approverOpenId, repliesTo, useFeishuButler } from './feishu-butler.js';

/**
 * Two-person approvals with a reminder and an escalation, through the running Butler with the real Lark SDK: the
 * card waits in the group's thread, the approvers who have not decided get it in their direct chat (a message
 * sent by open_id) once, the on-call once more, and a card callback from a copy decides the request. Feishu's
 * callback names the clicked card by `context.open_message_id`, the id the message create answered for the copy:
 * that is the `cardMessageId` the adapter gives the core.
 */

const patOpenId = 'ou_pat0000000000000000000000000003';
const oncallOpenId = 'ou_oncall00000000000000000000000004';

const suite = useFeishuButler({
  config: {
    approvers: { feishu: [approverOpenId, patOpenId, oncallOpenId] },
    approvalPolicy: {
      quorum: { high: 2 },
      remindAfter: '1h',
      escalateAfter: '2h',
      escalateTo: { feishu: [oncallOpenId] },
    },
  },
});

const isCard = (message: FakeMessage) => JSON.stringify(message.content).includes('approval_id');
/** What Butler sent into a person's direct chat, in order (none before the chat exists). */
const directMessages = (openId: string) => {
  const chatId = suite.fake.directChats.get(openId);
  return chatId ? suite.fake.sentMessages().filter((message) => message.chatId === chatId) : [];
};
const cardsTo = (openId: string) => directMessages(openId).filter(isCard);
const notesTo = (openId: string) =>
  directMessages(openId)
    .filter((message) => message.msgType === 'text')
    .map((message) => String(message.content.text));

function click(approvalId: string, messageId: string, operatorOpenId: string) {
  return postToButler(
    suite.url.replace('/events', '/card'),
    cardActionEvent({
      operatorOpenId,
      messageId,
      chatId: suite.fake.messages.get(messageId)?.chatId ?? 'oc_group_chat',
      value: { approval_id: approvalId, decision: 'approve' },
    }),
  );
}

describe(`Feishu reminders and escalation of a two-person approval (${databaseKind})`, () => {
  it('sends the card to each approver still needed once, the on-call once more, and a click on a copy completes the quorum', async () => {
    suite.fake.contactUsers.set(patOpenId, { name: 'Pat Lin' });
    suite.model.enqueue({
      toolCalls: [{ id: uniqueId('call_'), name: 'restart_service', arguments: '{"service":"billing"}' }],
    });
    const userMessageId = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({
        messageId: userMessageId,
        threadId: uniqueId('omt_'),
        text: '@_user_1 restart billing',
      }),
    );
    // The first approver approves before the reminder is due (the request is aged past it only then), so is not
    // reminded.
    const card = await waitFor(() => repliesTo(suite.fake, userMessageId).find(isCard));
    expect(card.replyInThread).toBe(true);
    const approvalId = /"approval_id":"([^"]+)"/.exec(JSON.stringify(card.content))?.[1] ?? '';
    // A click counts on the card Butler recorded as the request's: a person cannot click before that anyway.
    await waitForAsync(async () => (await suite.app.butler.store.approvals.get(approvalId))?.cardMessageId);
    const first = await click(approvalId, card.messageId, approverOpenId);
    expect(first.body.toast).toEqual({
      type: 'info',
      content: 'Your approval is counted: it waits for another approver.',
    });
    // (A card callback names the operator by open_id only: that is what the card can show of them.)
    expect(JSON.stringify(first.body.card)).toContain('1 of 2 approvals: ou&#95;approver');
    expect(buttonCount(first.body.card)).toBeGreaterThan(0);

    // Pat and the on-call get the card in their direct chats; then the on-call again, escalated.
    await ageRequest(suite.app.butler.database, approvalId, hour);
    await waitFor(() => (cardsTo(oncallOpenId).length === 1 && cardsTo(patOpenId).length === 1) || undefined);
    await ageRequest(suite.app.butler.database, approvalId, hour);
    await waitFor(() => cardsTo(oncallOpenId).length === 2 || undefined, 10_000);
    // The group's card is redrawn after the people are told: wait for it, however long that takes.
    await waitFor(
      () => /escalated to ou&#95;oncall/.test(suite.fake.visibleText(card.messageId)) || undefined,
      10_000,
    );
    await delay(800);
    expect(cardsTo(patOpenId)).toHaveLength(1);
    expect(cardsTo(oncallOpenId)).toHaveLength(2);
    expect(directMessages(approverOpenId)).toEqual([]);
    const sentByOpenId = suite.fake
      .callsTo('POST', '/open-apis/im/v1/messages')
      .filter((call) => call.query.receive_id_type === 'open_id')
      .map((call) => call.body?.receive_id);
    expect(sentByOpenId).toEqual([patOpenId, oncallOpenId, oncallOpenId]);
    expect(notesTo(patOpenId)).toEqual([expect.stringMatching(/^A request in a conversation is waiting/)]);
    expect(notesTo(oncallOpenId)[1]).toMatch(/^Escalated to you: a request has waited/);
    for (const copy of [...cardsTo(patOpenId), ...cardsTo(oncallOpenId)]) {
      expect(JSON.stringify(copy.content)).toContain(`"approval_id":"${approvalId}"`);
      expect(copy.replyTo).toBeUndefined();
    }
    // The group's card says who was told: by name where the contact API gives one, else by open_id.
    expect(suite.fake.visibleText(card.messageId)).toMatch(
      /reminded Pat Lin, ou&#95;oncall0+4 at \d\d:\d\d UTC; escalated to ou&#95;oncall0+4 at \d\d:\d\d UTC/,
    );

    // A callback naming the request from a message that is neither its card nor a copy (Pat's reminder note).
    const note = directMessages(patOpenId).find((message) => message.msgType === 'text');
    const stray = await click(approvalId, note?.messageId ?? '', patOpenId);
    expect(stray.body).toEqual({
      toast: { type: 'error', content: 'This button does not belong to this request.' },
    });
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(0);
    expect(await suite.app.butler.store.approvals.get(approvalId)).toMatchObject({
      status: 'pending',
      votes: [expect.objectContaining({ id: approverOpenId })],
    });

    // Pat approves on the copy in their direct chat: the second approval runs the call, once.
    const patCard = cardsTo(patOpenId)[0];
    suite.model.enqueue({ text: 'billing restarted.' });
    const second = await click(approvalId, patCard?.messageId ?? '', patOpenId);
    expect(second.body.toast).toMatchObject({ type: 'success' });
    expect(JSON.stringify(second.body.card)).toContain(`Approved by <at id=${patOpenId}></at>`);
    await waitFor(() => /Approved by/.test(suite.fake.visibleText(card.messageId)) || undefined);
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(1);
    const channelCard = suite.fake.messages.get(card.messageId);
    expect(buttonCount(channelCard?.content)).toBe(0);
    expect(JSON.stringify(channelCard?.content)).toContain(`Approved by <at id=${patOpenId}></at>`);
    // The on-call's copies show it too; the one clicked is replaced by the callback's answer.
    for (const copy of cardsTo(oncallOpenId)) expect(buttonCount(copy.content)).toBe(0);
    expect(await suite.app.butler.store.approvals.get(approvalId)).toMatchObject({ status: 'approved' });
    // The turn goes on in the group's thread.
    const continuation = repliesTo(suite.fake, userMessageId).at(-1);
    expect(continuation?.messageId).not.toBe(card.messageId);
    expect(suite.fake.visibleText(continuation?.messageId ?? '')).toBe('billing restarted.');

    // A later click on another copy runs nothing more.
    await click(approvalId, cardsTo(oncallOpenId)[0]?.messageId ?? '', oncallOpenId);
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(1);
  });
});
