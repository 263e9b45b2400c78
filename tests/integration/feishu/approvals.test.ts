import { describe, expect, it } from 'vitest';
import type { Json } from '../../helpers/fake-feishu-api.js';
import { waitFor } from '../../helpers/wait-for.js';
import { aliceOpenId } from '../../unit/feishu/feishu-events.js';
import { buttonCount, clickCard, type PendingApproval, requestRestart } from './approval-steps.js';
import { approverOpenId, repliesTo, useFeishuButler } from './feishu-butler.js';

const suite = useFeishuButler();
const click = (pending: PendingApproval, decision: 'approve' | 'reject', operatorOpenId?: string) =>
  clickCard(suite, pending, decision, operatorOpenId);

describe('Feishu approval cards through the running Butler', () => {
  it('posts the card in the thread and runs the tool once after an approver approves', async () => {
    const pending = await requestRestart(suite);
    const cardMessage = suite.fake.messages.get(pending.cardMessageId);
    expect(cardMessage?.replyInThread).toBe(true);
    expect(pending.card).toMatchObject({ schema: '2.0', header: { template: 'red' } });
    expect(JSON.stringify(pending.card)).toContain('payments-api');
    // Approve, Reject and Approve for this conversation (standingApprovalHours defaults to 8).
    expect(buttonCount(pending.card)).toBe(3);
    expect(JSON.stringify(pending.card)).toContain('"decision":"approve_for_conversation"');
    expect(suite.tools.requests).toHaveLength(0);

    suite.model.enqueue({ text: 'payments-api restarted.' });
    const answer = await click(pending, 'approve');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ toast: { type: 'success' }, card: { type: 'raw' } });
    const replaced = JSON.stringify(answer.body.card);
    expect(replaced).toContain(`Approved by <at id=${approverOpenId}></at>`);
    expect(buttonCount(answer.body.card)).toBe(0);
    await suite.app.settle();

    expect(suite.tools.requests).toHaveLength(1);
    const continuation = repliesTo(suite.fake, pending.userMessageId).at(-1);
    expect(continuation?.messageId).not.toBe(pending.cardMessageId);
    expect(continuation?.replyInThread).toBe(true);
    expect(suite.fake.visibleText(continuation?.messageId as string)).toBe('payments-api restarted.');
  });

  it('rejects without running the tool and replaces the card', async () => {
    const pending = await requestRestart(suite);
    suite.model.enqueue({ text: 'Understood, not restarting.' });
    const answer = await click(pending, 'reject');
    expect(answer.body).toMatchObject({ toast: { type: 'success' } });
    expect(JSON.stringify(answer.body.card)).toContain('Rejected by');
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(0);
    const toolResult = suite.model.requests.at(-1)?.messages.findLast((message) => message.role === 'tool');
    expect(String(toolResult?.content)).toMatch(/reject/i);
  });

  it('answers an unauthorised clicker with an error toast, keeps the card, and runs nothing', async () => {
    const pending = await requestRestart(suite);
    const answer = await click(pending, 'approve', aliceOpenId);
    expect(answer.body.toast).toMatchObject({ type: 'error' });
    expect(answer.body.card).toBeUndefined();
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(0);
    expect(suite.fake.messages.get(pending.cardMessageId)?.patches).toBe(0);

    suite.model.enqueue({ text: 'done' });
    const approved = await click(pending, 'approve');
    expect(approved.body.toast).toMatchObject({ type: 'success' });
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(1);
  });

  it('runs the tool once however often the card is clicked', async () => {
    const pending = await requestRestart(suite);
    suite.model.setFallback({ text: 'done' });
    const answers = await Promise.all([
      click(pending, 'approve'),
      click(pending, 'approve'),
      click(pending, 'approve'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.filter((answer) => (answer.body.toast as Json).type === 'success')).toHaveLength(1);
    for (const answer of answers) expect(JSON.stringify(answer.body.card)).toContain('Approved by');
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(1);
    await waitFor(() => repliesTo(suite.fake, pending.userMessageId).length >= 2 || undefined);
  });
});
