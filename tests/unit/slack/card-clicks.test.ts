import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButlerIntake } from '../../../src/core/contracts/adapter.js';
import type { ApprovalCard, DecisionResult } from '../../../src/core/contracts/approval-card.js';
import type { ApprovalDecisionInput } from '../../../src/core/contracts/events.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { approvalCard, batchId, deleteRecordCall, restartCall } from './approval-fixtures.js';
import { asForm, blockActions, type CardActionId, postToSlack, rejectSubmission } from './payloads.js';
import { type ServedSlack, serveSlack } from './slack-connector-http.js';

/**
 * The real connector over HTTP, with the core's port recorded: what each new card button asks the core to
 * decide, and what Slack is shown after. Independent of the core's approval service (connector-http.test.ts
 * drives that one).
 */

/** ButlerIntake at the adapter's port: records decisions and answers with what the test scripts. */
class RecordingIntake implements ButlerIntake {
  readonly decisions: ApprovalDecisionInput[] = [];
  answer: (input: ApprovalDecisionInput) => Promise<DecisionResult> = async () => ({ ok: true, card });

  async accept() {
    return { status: 'duplicate' as const };
  }

  async isKnownConversation() {
    return false;
  }
  async workspaceRemoved() {}
  async workspaceInstalled() {}

  async stop(): Promise<'idle'> {
    return 'idle';
  }

  async precheck(): Promise<'ok'> {
    return 'ok';
  }
  async shareFile(): Promise<never> {
    throw new Error('card clicks share no files');
  }

  decide(input: ApprovalDecisionInput): Promise<DecisionResult> {
    this.decisions.push(input);
    return this.answer(input);
  }

  async approvalDetails() {
    return undefined;
  }

  async answerInput(): Promise<never> {
    throw new Error('card clicks answer no questions');
  }

  async inputQuestion(): Promise<never> {
    throw new Error('card clicks ask no questions');
  }

  mayDecide() {
    return { allowed: false as const, reason: 'not asked in these tests' };
  }

  async recordFeedback(): Promise<never> {
    throw new Error('card clicks rate no replies');
  }

  async home(): Promise<never> {
    throw new Error('card clicks read no home page');
  }
}

const card = approvalCard([restartCall, deleteRecordCall], { standingApprovalHours: 8 });
const threadTs = '1700000000.000100';
const cardTs = '1700000000.000900';
const approver = { id: 'U0APPROVER', name: 'approver' };
const decidedAt = new Date('2026-11-20T12:03:00Z');

let intake: RecordingIntake;
let fake: FakeSlackApi;
let slackOverHttp: ServedSlack;
let url: string;

beforeEach(async () => {
  intake = new RecordingIntake();
  fake = await startFakeSlackApi();
  slackOverHttp = await serveSlack(intake, fake.url);
  url = slackOverHttp.url;
});

afterEach(async () => {
  await slackOverHttp.close();
  await fake.close();
});

const click = (actionId: CardActionId, target: { approvalId: string } | { batchId: string }) =>
  postToSlack(url, asForm(blockActions({ ...target, actionId, messageTs: cardTs, threadTs })));

const updatedBlocks = async () =>
  JSON.stringify((await fake.waitFor(() => fake.callsTo('chat.update')[0])).args.blocks);

function decided(overrides: Partial<ApprovalCard['calls'][number]>[]): ApprovalCard {
  return { ...card, calls: card.calls.map((call, index) => ({ ...call, ...overrides[index] })) };
}

describe('Slack card clicks: what the core is asked to decide', () => {
  it('"Approve all" decides the batch before acknowledging, tells the clicker the core\'s note, and redraws', async () => {
    let finish = (_result: DecisionResult) => {};
    intake.answer = () => new Promise((resolve) => (finish = resolve));
    const response = click('butler_approve_all', { batchId });
    expect(await Promise.race([response.then(() => 'acknowledged'), delay(150, 'waiting')])).toBe('waiting');
    expect(intake.decisions).toEqual([
      { batchId, platform: 'slack', cardMessageId: cardTs, user: approver, decision: 'approve' },
    ]);
    const message = 'Approved 1 call; 1 needs an approver other than you.';
    finish({
      ok: true,
      message,
      card: decided([{}, { status: 'approved', decidedBy: approver, decidedAt }]),
    });
    expect((await response).status).toBe(200);
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args).toMatchObject({
      channel: 'C0GENERAL',
      user: 'U0APPROVER',
      text: message,
      thread_ts: threadTs,
    });
    const update = await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(update.args.ts).toBe(cardTs);
    const blocks = JSON.stringify(update.args.blocks);
    expect(blocks).toContain('Approved by approver at <!date^');
    // One call is left, with its own buttons: "all" is gone.
    expect(blocks).toContain('butler_call_0');
    expect(blocks).not.toContain('butler_approve_all');
  });

  it('"Approve for this conversation" decides that call and shows until when', async () => {
    const standingUntil = new Date('2026-11-20T18:00:00Z');
    intake.answer = async () => ({
      ok: true,
      card: approvalCard([
        { ...restartCall, status: 'approved', decidedBy: approver, decidedAt, standingUntil },
      ]),
    });
    expect((await click('butler_approve_conversation', { approvalId: restartCall.approvalId })).status).toBe(
      200,
    );
    expect(intake.decisions).toEqual([
      {
        approvalId: restartCall.approvalId,
        platform: 'slack',
        cardMessageId: cardTs,
        user: approver,
        decision: 'approve_for_conversation',
      },
    ]);
    const blocks = await updatedBlocks();
    expect(blocks).toContain('Approved for this conversation by approver until <!date^');
    expect(blocks).not.toContain('butler_approve');
    expect(fake.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it("a call's own button on a shared card decides only that call", async () => {
    const body = blockActions({
      approvalId: deleteRecordCall.approvalId,
      actionId: 'butler_approve',
      blockId: 'butler_call_1',
      messageTs: cardTs,
      threadTs,
    });
    await postToSlack(url, asForm(body));
    expect(intake.decisions).toEqual([
      {
        approvalId: deleteRecordCall.approvalId,
        platform: 'slack',
        cardMessageId: cardTs,
        user: approver,
        decision: 'approve',
      },
    ]);
  });

  it('"Reject all" asks for a reason, then rejects the batch with it', async () => {
    intake.answer = async () => ({
      ok: true,
      card: decided([
        { status: 'rejected', decidedBy: approver, reason: 'wrong table' },
        { status: 'rejected', decidedBy: approver, reason: 'wrong table' },
      ]),
    });
    await click('butler_reject_all', { batchId });
    const open = await fake.waitFor(() => fake.callsTo('views.open')[0]);
    expect(intake.decisions).toEqual([]);
    const view = typeof open.args.view === 'string' ? JSON.parse(open.args.view) : open.args.view;
    expect(JSON.parse(view.private_metadata)).toEqual({
      batchId,
      channel: 'C0GENERAL',
      messageTs: cardTs,
      threadTs,
    });
    const submission = rejectSubmission({ batchId, messageTs: cardTs, threadTs, reason: 'wrong table' });
    expect((await postToSlack(url, asForm(submission))).status).toBe(200);
    expect(intake.decisions).toEqual([
      {
        batchId,
        platform: 'slack',
        cardMessageId: cardTs,
        user: approver,
        decision: 'reject',
        reason: 'wrong table',
      },
    ]);
    const blocks = await updatedBlocks();
    expect(blocks.match(/Rejected by approver: wrong table/g)).toHaveLength(2);
    expect(blocks).not.toContain('butler_reject');
  });

  it('"Reject all" rejects without a reason when the modal cannot open', async () => {
    fake.failNext('views.open', { error: 'expired_trigger_id' });
    await click('butler_reject_all', { batchId });
    await fake.waitFor(() => intake.decisions[0]);
    expect(intake.decisions).toEqual([
      { batchId, platform: 'slack', cardMessageId: cardTs, user: approver, decision: 'reject' },
    ]);
  });

  it('tells a clicker the core refused privately and leaves the card alone', async () => {
    const message = 'High-risk actions need an approver other than the person who asked.';
    intake.answer = async () => ({ ok: false, code: 'not_authorized', message, card });
    await click('butler_approve_all', { batchId });
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args.text).toBe(message);
    await delay(100);
    expect(fake.callsTo('chat.update')).toEqual([]);
  });
});
