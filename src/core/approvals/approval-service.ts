import type {
  ApprovalCard,
  ApprovalDetails,
  ApprovalDetailsRequest,
  ApprovalTarget,
  DecisionResult,
} from '../contracts/approval-card.js';
import {
  type ApprovalDecisionInput,
  type ChatUser,
  onPlatform,
  type Person,
  type Platform,
} from '../contracts/events.js';
import { isUuid } from '../contracts/ids.js';
import type { Logger } from '../contracts/logger.js';
import type { ApprovalRecordInfo, Observer } from '../contracts/observer.js';
import type { DecisionSubject } from '../contracts/read-models.js';
import type {
  ApprovalGrant,
  ApprovalNoticeCard,
  ApprovalRecord,
  NewApproval,
  Store,
} from '../contracts/store.js';
import type { ApprovalPolicy, Permission } from '../tools/policy.js';
import type { Risk } from '../tools/tool.js';
import {
  alreadyDecided,
  applyDecision,
  enqueueResume,
  isComplete,
  partialMessage,
  votedAlready,
} from './apply-decision.js';
import { batchCard, batchDetails, isPastDeadline, offersStanding } from './batch-card.js';
import { decisionParties } from './parties.js';

const riskRank: Record<Risk, number> = { low: 0, medium: 1, high: 2 };

/** What observers hear of a request: ids and names, never its arguments. */
const recordInfo = (approval: ApprovalRecord): ApprovalRecordInfo => ({
  approvalId: approval.id,
  conversationKey: approval.conversationKey,
  toolName: approval.toolName,
  risk: approval.risk,
});

/** Whether a click came from the request's card or a copy of it sent to someone directly (same buttons). */
const isCardOf = (first: ApprovalRecord, messageId: string | undefined) =>
  messageId === first.cardMessageId || first.noticeCards.some((notice) => notice.messageId === messageId);

/** Why a request of a workspace Butler was removed from cannot be decided now. */
const pausedReason = 'It waits until Butler is added to its workspace again.';

export interface ApprovalServiceOptions {
  /** How long "Approve for this conversation" lasts; 0 turns it off. */
  standingApprovalHours: number;
  /**
   * Shows a decision taken on another channel (the HTTP API) on the card where the request was posted;
   * absent, the card changes when the turn continues.
   */
  showDecision?: (batch: readonly ApprovalRecord[], card: ApprovalCard) => Promise<void>;
  /** Redraws a copy of the card sent to someone directly (a reminder, an escalation). */
  showOnNotice?: (notice: ApprovalNoticeCard, card: ApprovalCard) => Promise<void>;
  /**
   * Whether this process answers on `platform`. A decision on a request asked where it does not (the
   * terminal chat, decided in the admin console) continues in the process that does, once it runs.
   */
  answersOn?: (platform: Platform) => boolean;
  /** Where a person reads a request whole (the admin console), when Butler knows its public address. */
  requestLink?: (target: ApprovalTarget) => string;
  /** What a request nobody decided in time becomes: `expire` (the default) or `reject`. */
  onExpiry?: 'expire' | 'reject';
  /** Distinct approvers a call of each risk needs (`approvalPolicy.quorum`); absent: one. */
  quorum?: Partial<Record<Risk, number | undefined>>;
}

/** Channels whose approvers may decide requests asked elsewhere: an API key of an approver. */
const decidesEverywhere: readonly Platform[] = ['api'];

/**
 * Approval decisions. A decision is checked against who clicked (from the platform's signed payload)
 * and the database; the first valid one wins atomically. The decision that completes a batch (every call
 * on its card decided) enqueues the turn's continuation in the same transaction, under a lock on the
 * batch, so a continuation is never lost and never made twice.
 */
export class ApprovalService {
  constructor(
    private readonly store: Store,
    private readonly policy: ApprovalPolicy,
    private readonly observer: Observer,
    private readonly logger: Logger,
    private readonly onWork: () => void,
    private readonly options: ApprovalServiceOptions = { standingApprovalHours: 0 },
  ) {}

  /** The card of a batch, as the platforms show it. */
  card(batch: readonly ApprovalRecord[]): ApprovalCard {
    return batchCard(batch, this.policy, this.options.standingApprovalHours, this.link(batch));
  }

  /**
   * The calls of a request with their arguments whole, from the database; undefined when there is no such
   * request for the asking platform (the cross-channel rule of `decide`), or the click was not on its card.
   */
  async details(received: ApprovalDetailsRequest): Promise<ApprovalDetails | undefined> {
    const id = (received.approvalId ?? received.batchId).toLowerCase();
    if (!isUuid(id)) return undefined;
    const batch =
      received.batchId === undefined ? await this.batchOf(id) : await this.store.approvals.listBatch(id);
    const [first] = batch;
    if (!first) return undefined;
    if (first.platform !== received.platform && !decidesEverywhere.includes(received.platform))
      return undefined;
    if (received.cardMessageId !== undefined && !isCardOf(first, received.cardMessageId)) {
      this.logger.warn(
        { approvalId: id, platform: received.platform, clickedMessage: received.cardMessageId },
        'show-arguments click on a message that is not its card',
      );
      return undefined;
    }
    const approvalId = received.approvalId === undefined ? undefined : id;
    return batchDetails(batch, this.policy, approvalId, this.link(batch, approvalId));
  }

  /** The console link of a card (or of one call of it), when there is a public address. */
  private link(batch: readonly ApprovalRecord[], approvalId?: string): string | undefined {
    const [first] = batch;
    if (!first || !this.options.requestLink) return undefined;
    if (approvalId !== undefined) return this.options.requestLink({ approvalId });
    return this.options.requestLink(
      batch.length === 1 ? { approvalId: first.id } : { batchId: first.batchId },
    );
  }

  /**
   * What `decide` would tell `user` about `approval` now, without deciding: whether to offer them buttons
   * (the admin console shows Approve only to a key that may use it).
   */
  permission(
    approval: DecisionSubject & Partial<Pick<ApprovalRecord, 'quorum' | 'votes'>>,
    user: Person,
  ): Permission {
    if (approval.platform !== user.platform && !decidesEverywhere.includes(user.platform))
      return { allowed: false, reason: 'It is decided where it was asked.' };
    if (approval.pausedAt) return { allowed: false, reason: pausedReason };
    if (approval.status !== 'pending' || approval.expiresAt <= new Date())
      return { allowed: false, reason: 'It no longer waits for a decision.' };
    const again = votedAlready(this.policy.people, approval, user);
    if (again) return { allowed: false, reason: again };
    return this.policy.mayDecide({
      ...decisionParties(approval),
      risk: approval.risk,
      user,
      ...(approval.quorum ? { quorum: approval.quorum } : {}),
    });
  }

  /** Whether `person`, through any of their identities, is one of the people `approval` was asked for. */
  askedBy(approval: Parameters<typeof decisionParties>[0], person: Person): boolean {
    return decisionParties(approval).requesters.some((requester) =>
      this.policy.people.same(requester, person),
    );
  }

  newApproval(input: Omit<NewApproval, 'approverIds' | 'quorum'>): NewApproval {
    return {
      ...input,
      approverIds: this.policy.approversOn(input.platform, input.conversationKey),
      // A personal call is its owner's to confirm alone.
      quorum: input.confirmBy ? 1 : this.quorumFor(input.risk),
    };
  }

  private quorumFor(risk: Risk): number {
    return this.options.quorum?.[risk] ?? 1;
  }

  async decide(received: ApprovalDecisionInput): Promise<DecisionResult> {
    // Ids are UUIDs, which the database compares case-insensitively: so must everything else.
    const input = {
      ...received,
      ...(received.approvalId ? { approvalId: received.approvalId.toLowerCase() } : {}),
      ...(received.batchId ? { batchId: received.batchId.toLowerCase() } : {}),
    } as ApprovalDecisionInput;
    const id = input.approvalId ?? input.batchId;
    const notFound: DecisionResult = {
      ok: false,
      code: 'not_found',
      message: 'This approval request no longer exists.',
    };
    if (!isUuid(id)) return notFound;
    const log = this.logger.child({ approvalId: id, platform: input.platform });
    const batch =
      input.batchId === undefined
        ? await this.batchOf(input.approvalId)
        : await this.store.approvals.listBatch(input.batchId);
    const [first] = batch;
    if (!first) return notFound;
    const crossChannel = first.platform !== input.platform;
    if (crossChannel && !decidesEverywhere.includes(input.platform)) return notFound;
    // Off its card, one call at a time, approve or reject, and only where it was asked.
    const offCardRefused =
      input.offCard &&
      (input.cardMessageId !== undefined ||
        input.batchId !== undefined ||
        input.decision === 'approve_for_conversation' ||
        crossChannel);
    if (offCardRefused) {
      log.warn({ decision: input.decision }, 'off-card decision outside what off-card buttons do');
      return { ...notFound, message: 'This button does not decide that.' };
    }
    // A button decides only the card it is on (or a copy of it sent to someone directly): a value naming
    // another request is not this card's.
    if (input.cardMessageId !== undefined && !isCardOf(first, input.cardMessageId)) {
      log.warn({ clickedMessage: input.cardMessageId }, 'approval click on a message that is not its card');
      return { ...notFound, message: 'This button does not belong to this request.' };
    }
    const user = onPlatform(input.user, input.platform);
    const targets = input.approvalId ? batch.filter((approval) => approval.id === input.approvalId) : batch;
    // Butler was removed from its workspace: nothing it approves could run there, so it waits for Butler's return.
    if (targets.some((approval) => approval.status === 'pending' && approval.pausedAt))
      return { ok: false, code: 'not_authorized', message: pausedReason };
    const open = targets.filter((approval) => approval.status === 'pending' && !isPastDeadline(approval));
    if (open.length === 0) return alreadyDecided(batch, input.approvalId, this.card(batch));

    const standing = input.decision === 'approve_for_conversation';
    if (standing && (input.batchId || this.options.standingApprovalHours <= 0 || !offersStanding(batch)))
      return { ok: false, code: 'not_authorized', message: 'Standing approvals are not available here.' };
    const refusals: string[] = [];
    const allowed = open.filter((approval) => {
      // Elsewhere (an API key), only an approver decides: the policy compares people, whichever identity
      // makes them one, against the approver lists in force now.
      const check = { ...decisionParties(approval), risk: approval.risk, user, quorum: approval.quorum };
      const permission = standing ? this.policy.mayGrant(check) : this.policy.mayDecide(check);
      if (!permission.allowed) refusals.push(permission.reason);
      return permission.allowed;
    });
    if (allowed.length === 0) {
      log.info({ user: input.user.id }, 'approval click refused');
      return {
        ok: false,
        code: 'not_authorized',
        message: refusals[0] ?? 'Not allowed.',
        card: this.card(batch),
      };
    }

    const standingUntil = standing
      ? new Date(Date.now() + this.options.standingApprovalHours * 3_600_000)
      : undefined;
    const decided = { people: this.policy.people, targets: allowed, input, user, standingUntil };
    const { after, changed, voted, again } = await applyDecision(this.store, decided);
    if (changed.length === 0 && voted.length === 0) {
      if (again) return { ok: false, code: 'not_authorized', message: again, card: this.card(after) };
      return alreadyDecided(after, input.approvalId, this.card(after));
    }
    for (const approval of voted) {
      log.info({ user: user.id, approval: approval.id, votes: approval.votes.length }, 'approval counted');
      const { votes, quorum } = approval;
      this.observer.approvalVoted?.({
        ...recordInfo(approval),
        votes: votes.length,
        quorum,
        votedBy: user.id,
      });
    }
    for (const approval of changed) {
      log.info({ user: user.id, status: approval.status, approval: approval.id }, 'approval decided');
      this.observer.approvalDecided({
        ...recordInfo(approval),
        decision: input.decision,
        decidedBy: user.id,
      });
    }
    this.onWork();
    const card = this.card(after);
    // Every card of the request shows the decision, but the one clicked (its platform redraws that one): the
    // channel's card after a decision taken elsewhere (the API, Slack's App Home, a reminder), and the copies.
    await this.showEverywhere(after, {
      // A click on a copy sent directly (it passed the check above) leaves the channel's card to be redrawn here.
      channel:
        crossChannel ||
        input.offCard === true ||
        (input.cardMessageId !== undefined && input.cardMessageId !== first.cardMessageId),
      card,
      except: input.cardMessageId,
    });
    // An approval counted toward a quorum is neither decided nor left to someone else: it waits for more.
    const skipped = open.length - changed.length - voted.length;
    const notes = [
      ...(skipped > 0 ? [partialMessage(changed.length, skipped, refusals[0])] : []),
      ...(skipped === 0 && changed.length === 0
        ? ['Your approval is counted: it waits for another approver.']
        : []),
      ...(crossChannel && this.options.answersOn?.(first.platform) === false
        ? [
            `The request was asked on ${first.platform}: Butler continues it there, as soon as a Butler process serving ${first.platform} runs on this database.`,
          ]
        : []),
    ];
    return { ok: true, card, ...(notes.length > 0 ? { message: notes.join(' ') } : {}) };
  }

  /**
   * Redraws the cards of a batch: the channel's (unless `channel` is false: a click there is redrawn by its
   * platform) and the copies sent directly, but `except`, the one clicked. A failure is logged.
   */
  async showEverywhere(
    batch: readonly ApprovalRecord[],
    {
      channel = true,
      except,
      card = this.card(batch),
    }: { channel?: boolean; except?: string | undefined; card?: ApprovalCard } = {},
  ): Promise<void> {
    const [first] = batch;
    if (!first) return;
    const log = this.logger.child({ batchId: first.batchId });
    if (channel && first.cardMessageId && first.cardMessageId !== except)
      await this.options
        .showDecision?.(batch, card)
        .catch((error: unknown) => log.warn({ err: error }, 'could not redraw the card'));
    for (const notice of first.noticeCards)
      if (notice.messageId !== except)
        await this.options
          .showOnNotice?.(notice, card)
          .catch((error: unknown) => log.warn({ err: error }, 'could not redraw a card sent directly'));
  }

  /**
   * The live standing approval that lets `toolName` (at `risk`) run in the conversation without a card for
   * `requesters`: granted by someone who is still an approver and is none of them when the risk is high.
   */
  async standingGrant(input: {
    conversationKey: string;
    toolName: string;
    risk: Risk;
    requesters: readonly Person[];
  }): Promise<ApprovalGrant | undefined> {
    const grants = await this.store.grants.listActiveFor(input.conversationKey, input.toolName, new Date());
    return grants.find(
      (grant) =>
        // A tool whose risk was raised since the grant needs a card again.
        riskRank[input.risk] <= riskRank[grant.risk] &&
        // A call that needs two approvers is covered only by a grant two approvers gave together.
        (grant.quorum ?? 1) >= this.quorumFor(input.risk) &&
        this.policy.grantCovers({
          risk: input.risk,
          grantors: grant.grantors,
          requesters: input.requesters,
          conversationKey: input.conversationKey,
        }),
    );
  }

  /** Ends every standing approval in the conversation; only an approver of the platform may. */
  async revokeGrants(
    conversationKey: string,
    platform: Platform,
    user: ChatUser,
  ): Promise<{ ok: true; revoked: ApprovalGrant[] } | { ok: false; reason: string }> {
    if (!this.policy.isApprover(onPlatform(user, platform), conversationKey))
      return { ok: false, reason: 'Only an approver can revoke standing approvals.' };
    const revoked = await this.store.grants.revokeActive(conversationKey, user, new Date());
    this.logger.info(
      { conversation: conversationKey, user: user.id, revoked: revoked.length },
      'standing approvals revoked',
    );
    return { ok: true, revoked };
  }

  /** Closes approvals past their deadline; each batch they complete gets its continuation. */
  async expireDue(now = new Date()): Promise<number> {
    const expired = await this.store.transaction(async (tx) => {
      const rows = await tx.approvals.expireDue(
        now,
        this.options.onExpiry === 'reject'
          ? { status: 'rejected', reason: 'nobody decided in time' }
          : undefined,
      );
      for (const batchId of new Set(rows.map((row) => row.batchId))) {
        await tx.approvals.lockBatch(batchId);
        const batch = await tx.approvals.listBatch(batchId);
        if (isComplete(batch)) await enqueueResume(tx, batch, batch[0]?.requestedBy.id ?? '');
      }
      return rows;
    });
    for (const row of expired) {
      this.logger.info({ approvalId: row.id, conversation: row.conversationKey }, 'approval expired');
      this.observer.approvalExpired(recordInfo(row));
    }
    if (expired.length > 0) this.onWork();
    return expired.length;
  }

  private async batchOf(approvalId: string): Promise<ApprovalRecord[]> {
    const approval = await this.store.approvals.get(approvalId);
    return approval ? this.store.approvals.listBatch(approval.batchId) : [];
  }
}
