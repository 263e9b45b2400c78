import type { ChatAdapter } from '../contracts/adapter.js';
import { decodeConversationKey, encodeConversationKey } from '../contracts/conversation-key.js';
import type { Person, Platform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { ApprovalNoticeCard, ApprovalRecord, Store } from '../contracts/store.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { ApprovalService } from './approval-service.js';
import { decisionParties } from './parties.js';

/**
 * Reminders and escalation of waiting requests (`approvalPolicy.remindAfter`, `escalateAfter`): after the
 * delay, the approvers who may decide and have not get the card in a direct message, and later `escalateTo`
 * does. The sweeper claims each stage of a batch once across processes and queues it as inbox work in the
 * same transaction, so a crash after the claim still delivers it; each person sent a card is recorded, so a
 * retried delivery skips them. The cards sent are decidable like the channel's, which shows who was told.
 */

export interface NoticeOptions {
  remindAfterMs?: number | undefined;
  escalateAfterMs?: number | undefined;
  escalateTo: Partial<Record<Platform, readonly string[] | undefined>>;
}

type Stage = ApprovalNoticeCard['stage'];

export class ApprovalNotices {
  constructor(
    private readonly store: Store,
    private readonly approvals: ApprovalService,
    private readonly policy: ApprovalPolicy,
    private readonly adapters: ReadonlyMap<Platform, ChatAdapter>,
    private readonly options: NoticeOptions,
    private readonly logger: Logger,
    private readonly onWork: () => void,
  ) {}

  /** Queues the reminders and escalations that fell due (the sweeper calls it); returns how many. */
  async queueDue(now = new Date()): Promise<number> {
    let queued = 0;
    const stages: Array<[Stage, number | undefined]> = [
      ['reminder', this.options.remindAfterMs],
      ['escalation', this.options.escalateAfterMs],
    ];
    for (const [stage, afterMs] of stages) {
      if (afterMs === undefined) continue;
      queued += await this.store.transaction(async (tx) => {
        const batches = await tx.approvals.claimNotices(stage, new Date(now.getTime() - afterMs));
        for (const batchId of batches) {
          const [first] = await tx.approvals.listBatch(batchId);
          if (!first) continue;
          await tx.inbox.insert({
            platform: first.platform,
            dedupKey: `notify:${batchId}:${stage}`,
            conversationKey: first.conversationKey,
            userId: first.requestedBy.id,
            payload: { kind: 'notify', batchId, stage },
          });
        }
        return batches.length;
      });
    }
    if (queued > 0) this.onWork();
    return queued;
  }

  /** Sends a batch's card to the people of `stage` who have not had it, and shows on the card who was told. */
  async deliver(batchId: string, stage: Stage): Promise<void> {
    const batch = await this.store.approvals.listBatch(batchId);
    const waiting = batch.filter((approval) => approval.status === 'pending');
    const [first] = batch;
    if (!first || waiting.length === 0) return;
    const adapter = this.adapters.get(first.platform);
    const log = this.logger.child({ batchId, stage });
    if (!adapter?.openDirectConversation) {
      log.info({ platform: first.platform }, 'this platform has no direct messages: nobody is reminded');
      return;
    }
    const address = decodeConversationKey(first.conversationKey);
    const told = first.noticeCards.filter((card) => card.stage === stage).map((card) => card.person);
    const people = this.recipients(waiting, stage).filter(
      (person) => !told.some((other) => this.policy.people.same(other, person)),
    );
    const note =
      stage === 'reminder'
        ? `A request in a conversation is waiting for your decision (asked by ${names(first.requesters)}).`
        : `Escalated to you: a request has waited for a decision since ${first.createdAt.toISOString().slice(11, 16)} UTC (asked by ${names(first.requesters)}).`;
    // One card for everyone told now; the redraw below adds who was told to every copy.
    const card = this.approvals.card(batch);
    for (const known of people) {
      // Approvers are configured by id: the card says who was told by the name the platform knows.
      const name = await adapter.nameOf?.(known.id, address.workspace);
      const person = name ? { ...known, name } : known;
      try {
        const direct = await adapter.openDirectConversation(person, address.workspace, note);
        const messageId = await adapter.postApprovalCard({ address: direct, userId: person.id }, card);
        await this.store.approvals.addNoticeCard(batchId, {
          stage,
          person,
          conversationKey: encodeConversationKey(direct),
          messageId,
          at: new Date().toISOString(),
        });
      } catch (error) {
        log.warn({ err: error, person: person.id }, 'could not send the card directly');
      }
    }
    // The channel's card (and the copies sent before) say who was told, and when.
    await this.approvals.showEverywhere(await this.store.approvals.listBatch(batchId));
  }

  /**
   * Reminders: each approver who may decide a waiting call and has not approved it (through any of their
   * identities: a person who approved on the API is not reminded on Slack). Escalation: the people of
   * `escalateTo` among them: a channel whose profile puts its own approvers in place is not shown to an on-call
   * person who may not decide there.
   */
  private recipients(waiting: readonly ApprovalRecord[], stage: Stage): Person[] {
    const [first] = waiting;
    if (!first) return [];
    const platform = first.platform;
    const candidates =
      stage === 'escalation'
        ? (this.options.escalateTo[platform] ?? [])
        : this.policy.approversOn(platform, first.conversationKey);
    return candidates
      .map((id): Person => ({ platform, id }))
      .filter((person) =>
        waiting.some(
          (approval) =>
            !approval.votes.some((vote) => this.policy.people.same(vote, person)) &&
            this.policy.mayDecide({
              ...decisionParties(approval),
              risk: approval.risk,
              user: person,
              quorum: approval.quorum,
            }).allowed,
        ),
      );
  }
}

const names = (people: readonly { id: string; name?: string }[]) =>
  people.map((person) => person.name ?? person.id).join(', ');
