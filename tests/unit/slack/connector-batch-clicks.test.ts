import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../../src/core/contracts/store.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { asForm, blockActions, type CardActionId, postToSlack, rejectSubmission, team } from './payloads.js';
import { type ServedSlack, serveSlack } from './slack-connector-http.js';

/**
 * Cards of several calls (one model step) clicked over HTTP, against the real core: "Approve all",
 * "Reject all" and a call's own buttons, as the database records them and as the card is redrawn.
 */

let core: CoreIntake;
let fake: FakeSlackApi;
let slackOverHttp: ServedSlack;
let url: string;

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { slack: ['U0APPROVER', 'U0ANA'] } });
});
afterAll(() => core.close());

beforeEach(async () => {
  await core.reset();
  fake = await startFakeSlackApi();
  slackOverHttp = await serveSlack(core.intake, fake.url);
  url = slackOverHttp.url;
});

afterEach(async () => {
  await slackOverHttp.close();
  await fake.close();
});

const threadTs = '1700000000.000100';
const cardTs = '1700000000.000900';
const approver = { id: 'U0APPROVER', name: 'approver' };
const address = { platform: 'slack' as const, workspace: team, channel: 'C0GENERAL', thread: threadTs };

describe('Slack over HTTP: clicks on a card of several calls', () => {
  let batch: ApprovalRecord[];
  let batchId: string;

  beforeEach(async () => {
    batch = await core.pendingBatch({
      platform: 'slack',
      requester: { id: 'U0ALICE' },
      address,
      services: ['payments-api', 'ledger', 'search'],
    });
    batchId = batch[0]?.batchId ?? '';
  });

  const click = (actionId: CardActionId, target: { approvalId: string } | { batchId: string }) =>
    postToSlack(
      url,
      asForm(blockActions({ ...target, actionId, messageTs: cardTs, threadTs, user: approver })),
    );
  const statuses = () => Promise.all(batch.map(async ({ id }) => (await core.approval(id)).status));
  const update = async (index: number) =>
    JSON.stringify((await fake.waitFor(() => fake.callsTo('chat.update')[index])).args.blocks);

  it('"Approve all" stores every decision before acknowledging, then shows them all', async () => {
    const lock = await core.holdApproval(batch[0]?.id ?? '');
    const response = click('butler_approve_all', { batchId });
    expect(await Promise.race([response.then(() => 'acknowledged'), delay(150, 'waiting')])).toBe('waiting');
    await lock.release();
    expect((await response).status).toBe(200);
    expect(await statuses()).toEqual(['approved', 'approved', 'approved']);
    const blocks = await update(0);
    expect(blocks.match(/Approved by approver at/g)).toHaveLength(3);
    expect(blocks).not.toContain('butler_approve');
    expect(fake.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it("a call's own button decides that call; the card keeps the others' buttons", async () => {
    await click('butler_approve', { approvalId: batch[1]?.id ?? '' });
    expect(await statuses()).toEqual(['pending', 'approved', 'pending']);
    const blocks = await update(0);
    expect(blocks).toContain('2 of 3 actions still need approval');
    expect(blocks).toContain('butler_call_0');
    expect(blocks).not.toContain('butler_call_1');
    expect(blocks).toContain('butler_call_2');
    expect(blocks).toContain('butler_approve_all');
  });

  it('"Reject all" asks for a reason, then rejects every pending call with it', async () => {
    await click('butler_approve', { approvalId: batch[0]?.id ?? '' });
    await update(0);
    await click('butler_reject_all', { batchId });
    const open = await fake.waitFor(() => fake.callsTo('views.open')[0]);
    const view = typeof open.args.view === 'string' ? JSON.parse(open.args.view) : open.args.view;
    expect(JSON.parse(view.private_metadata)).toEqual({
      batchId,
      channel: 'C0GENERAL',
      messageTs: cardTs,
      threadTs,
    });
    expect(await statuses()).toEqual(['approved', 'pending', 'pending']);
    const submission = rejectSubmission({
      batchId,
      messageTs: cardTs,
      threadTs,
      reason: 'not during the freeze',
    });
    expect((await postToSlack(url, asForm(submission))).status).toBe(200);
    expect(await statuses()).toEqual(['approved', 'rejected', 'rejected']);
    expect(await core.approval(batch[2]?.id ?? '')).toMatchObject({
      reason: 'not during the freeze',
      decidedBy: approver,
    });
    const blocks = await update(1);
    expect(blocks.match(/Rejected by approver: not during the freeze/g)).toHaveLength(2);
    expect(blocks).not.toContain('butler_reject');
  });

  it('tells the requester privately that high risk needs another approver, and decides nothing', async () => {
    const requester = { id: 'U0ALICE', name: 'alice' };
    await postToSlack(
      url,
      asForm(
        blockActions({
          batchId,
          actionId: 'butler_approve_all',
          messageTs: cardTs,
          threadTs,
          user: requester,
        }),
      ),
    );
    const ephemeral = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(ephemeral.args).toMatchObject({
      user: 'U0ALICE',
      text: 'High-risk actions need an approver other than the person who asked.',
      thread_ts: threadTs,
    });
    expect(await statuses()).toEqual(['pending', 'pending', 'pending']);
    expect(fake.callsTo('chat.update')).toEqual([]);
  });
});
