import type { ApprovalCard, DecisionResult } from '../contracts/approval-card.js';
import type { ApprovalDecisionInput, Person } from '../contracts/events.js';
import type { Identity, People } from '../contracts/people.js';
import type { ApprovalRecord, Store } from '../contracts/store.js';
import { isPastDeadline } from './batch-card.js';

/**
 * The writing half of a decision: under the batch's lock, the calls decided (or, for a call that needs
 * several approvers, the approval counted), and the turn's continuation queued by the decision that
 * completes the batch, in the same transaction.
 */

/**
 * Dedup key of the one resume event a batch may produce, once every call on its card is decided or
 * expired. A batch stored before batches existed is keyed by its one approval's id, as it was then.
 */
const resumeDedupKey = (batchId: string) => `approval:${batchId}`;

export const isComplete = (batch: readonly ApprovalRecord[]) =>
  batch.every((approval) => approval.status !== 'pending');

/** The continuation of a parked turn, as inbox work: at most one per batch. */
export function enqueueResume(store: Store, batch: readonly ApprovalRecord[], userId: string) {
  const [first] = batch;
  if (!first) return Promise.resolve(undefined);
  return store.inbox.insert({
    platform: first.platform,
    dedupKey: resumeDedupKey(first.batchId),
    conversationKey: first.conversationKey,
    userId,
    payload: { kind: 'resume', batchId: first.batchId },
  });
}

const approvedAlready = 'You approved it already: it waits for another approver.';

/**
 * Why `user` may not approve `approval` again: they approved it already, through this identity or another of
 * theirs (a person counts once toward a quorum); undefined when they have not.
 */
export function votedAlready(
  people: People,
  approval: Partial<Pick<ApprovalRecord, 'votes'>>,
  user: Identity,
): string | undefined {
  const vote = approval.votes?.find((each) => people.same(each, user));
  if (!vote) return undefined;
  if (vote.platform === user.platform && vote.id === user.id) return approvedAlready;
  return `You approved it already, as ${vote.platform} ${vote.id}: a person counts once, whichever way they approve. It waits for another approver.`;
}

/**
 * Decides `targets` in one transaction under the batch's lock. Returns the batch as it is afterwards, the
 * approvals this decision changed (none when someone else decided every one of them first), those it gave an
 * approval that needs more (never a second one of the same person, through any identity), and, when it did
 * neither, why not if the person had approved already.
 */
export function applyDecision(
  store: Store,
  decision: {
    people: People;
    targets: readonly ApprovalRecord[];
    input: ApprovalDecisionInput;
    user: Person;
    standingUntil: Date | undefined;
  },
): Promise<{
  after: ApprovalRecord[];
  changed: ApprovalRecord[];
  voted: ApprovalRecord[];
  again?: string | undefined;
}> {
  const { people, targets, input, user, standingUntil } = decision;
  const at = new Date();
  const batchId = targets[0]?.batchId ?? '';
  return store.transaction(async (tx) => {
    await tx.approvals.lockBatch(batchId);
    const changed: ApprovalRecord[] = [];
    const voted: ApprovalRecord[] = [];
    for (const target of targets) {
      let grantors: Person[] = [user];
      let grants = standingUntil !== undefined;
      // One reject ends a call that needs several approvals; an approval is counted until there are enough.
      if (input.decision !== 'reject' && target.quorum > 1) {
        const counted = await tx.approvals.vote(
          target.id,
          { ...user, at: at.toISOString(), ...(standingUntil ? { standing: true } : {}) },
          people.identitiesOf(user),
        );
        if (!counted) continue;
        if (counted.votes.length < counted.quorum) {
          voted.push(counted);
          continue;
        }
        // It is approved for the conversation only when every approver asked for that; all of them granted it.
        grantors = counted.votes.map(({ at: _at, standing: _standing, ...voter }) => voter);
        grants = grants && counted.votes.every((vote) => vote.standing);
      }
      const row = await tx.approvals.decide(target.id, {
        status: input.decision === 'reject' ? 'rejected' : 'approved',
        decidedBy: user,
        reason: input.decision === 'reject' ? input.reason?.trim() || null : null,
        at,
        ...(grants && standingUntil ? { standingUntil } : {}),
      });
      if (!row) continue;
      changed.push(row);
      if (grants && standingUntil)
        await tx.grants.create({
          conversationKey: row.conversationKey,
          toolName: row.toolName,
          risk: row.risk,
          grantedBy: user,
          grantors,
          approvalId: row.id,
          quorum: grantors.length,
          expiresAt: standingUntil,
        });
    }
    const after = await tx.approvals.listBatch(batchId);
    if (changed.length > 0 && isComplete(after)) await enqueueResume(tx, after, input.user.id);
    if (changed.length > 0 || voted.length > 0) return { after, changed, voted };
    // Read under the lock: another identity of theirs may have voted while this one waited for it.
    const again = after
      .filter((approval) => targets.some((target) => target.id === approval.id))
      .map((approval) => votedAlready(people, approval, user))
      .find((reason) => reason !== undefined);
    return { after, changed, voted, again };
  });
}

/** What "Approve all" tells the clicker when only some calls were theirs to decide. */
export function partialMessage(done: number, skipped: number, reason: string | undefined): string {
  const calls = (count: number) => `${count} ${count === 1 ? 'action' : 'actions'}`;
  return `Decided ${calls(done)}; ${calls(skipped)} still ${skipped === 1 ? 'needs' : 'need'} someone else. ${reason ?? ''}`.trim();
}

/** The answer to a click on calls that no longer wait: expired, or decided by whom. */
export function alreadyDecided(
  batch: readonly ApprovalRecord[],
  approvalId: string | undefined,
  card: ApprovalCard,
): DecisionResult {
  const concerned = approvalId ? batch.filter((approval) => approval.id === approvalId) : batch;
  const expired = (approval: ApprovalRecord) => approval.status === 'expired' || isPastDeadline(approval);
  if (concerned.length > 0 && concerned.every(expired))
    return { ok: false, code: 'expired', message: 'This request has expired; nothing was run.', card };
  const [target] = concerned;
  if (!approvalId || !target)
    return {
      ok: false,
      code: 'already_decided',
      message: 'Every action on this card was already decided.',
      card,
    };
  const who = target.decidedBy?.name ?? target.decidedBy?.id ?? 'someone';
  return {
    ok: false,
    code: 'already_decided',
    message: `This request was already ${target.status} by ${who}.`,
    card,
  };
}
