import { type Person, type Platform, samePerson } from '../contracts/events.js';
import type { Risk } from './tool.js';

/**
 * Who may let a tool call run. low: at once. medium: an approver, or the requester when the turn answered
 * one person. high: an approver who is none of the people the turn answered (separation of duties).
 * A personal call (a memory saved for someone) is decided by that person alone.
 * Authority is the configured approver list in force now, compared by platform and id.
 * Fails closed: any risk other than exactly `low` needs approval, and only the listed cases may decide;
 * an error while deciding propagates and nothing is approved.
 */

export interface DecisionCheck {
  risk: Risk;
  /** Everyone whose message the turn answered, on the conversation's platform. */
  requesters: readonly Person[];
  /** A personal call: only this person decides it (and no standing approval covers it). */
  confirmBy?: Person | undefined;
  /** Who clicked, from the platform's signed payload (or the API key). */
  user: Person;
  /** Distinct approvers the call needs; more than one: none of them may be a requester. */
  quorum?: number;
}

export type Permission = { allowed: true } | { allowed: false; reason: string };

const allowed: Permission = { allowed: true };
const refused = (reason: string): Permission => ({ allowed: false, reason });
const notRequester = (requesters: readonly Person[], quorum = 1) =>
  `${quorum > 1 ? `This needs ${quorum} approvers` : 'High-risk actions need an approver'} other than the ${requesters.length > 1 ? 'people' : 'person'} who asked.`;

const nameOf = (person: Person) => person.name ?? person.id;

export class ApprovalPolicy {
  constructor(private readonly approvers: Readonly<Partial<Record<Platform, readonly string[]>>>) {}

  approversOn(platform: Platform): string[] {
    return [...(this.approvers[platform] ?? [])];
  }

  /** Whether `person` is a configured approver now (a removed approver decides nothing, grants included). */
  isApprover(person: Pick<Person, 'platform' | 'id'>): boolean {
    return (this.approvers[person.platform] ?? []).includes(person.id);
  }

  needsApproval(risk: Risk): boolean {
    return risk !== 'low';
  }

  /** Whether `check.user` may decide the call; `reason` explains a refusal to the clicker. */
  mayDecide(check: DecisionCheck): Permission {
    const { user, requesters } = check;
    if (check.confirmBy)
      return samePerson(user, check.confirmBy)
        ? allowed
        : refused(`Only ${nameOf(check.confirmBy)} can confirm this: it is saved for them.`);
    const isApprover = this.isApprover(user);
    const isRequester = requesters.some((requester) => samePerson(requester, user));
    const quorum = check.quorum ?? 1;
    // Two-person approval: the people who asked never count toward it, whatever the risk.
    if (quorum > 1) {
      if (isRequester) return refused(notRequester(requesters, quorum));
      return isApprover ? allowed : refused('You are not allowed to decide this request.');
    }
    if (check.risk === 'medium') {
      if (isApprover || (isRequester && requesters.length === 1)) return allowed;
      // Nobody can tell which of several people asked for the call: someone accountable decides.
      if (isRequester) return refused('Several people asked in this turn: an approver confirms this.');
    }
    if (check.risk === 'high') {
      if (isRequester) return refused(notRequester(requesters));
      if (isApprover) return allowed;
    }
    return refused('You are not allowed to decide this request.');
  }

  /**
   * Whether `check.user` may approve every later call of the tool in the conversation (a standing
   * approval). It covers calls by anyone there, so only an approver may grant it; for high risk, none of
   * the people who asked; never for a personal call.
   */
  mayGrant(check: DecisionCheck): Permission {
    if (check.confirmBy) return refused('This request cannot be approved for the whole conversation.');
    if (!this.isApprover(check.user))
      return refused('Only an approver can approve a tool for the whole conversation.');
    const asked = check.requesters.some((requester) => samePerson(requester, check.user));
    if ((check.risk === 'high' || (check.quorum ?? 1) > 1) && asked)
      return refused(notRequester(check.requesters, check.quorum));
    return allowed;
  }

  /**
   * Whether a standing approval by `grantor` lets a call of `risk` asked by `requesters` run without a
   * card: its grantor must still be an approver, and a grant never lets its grantor skip separation of
   * duties on a high-risk call they asked for themselves.
   */
  grantCovers(input: { risk: Risk; grantor: Person; requesters: readonly Person[] }): boolean {
    if (!this.isApprover(input.grantor)) return false;
    return !(input.risk === 'high' && input.requesters.some((person) => samePerson(person, input.grantor)));
  }

  /** "Who may approve", in words, for cards. */
  describe(
    risk: Risk,
    input: { platform: Platform; requesterCount: number; confirmBy?: Person | undefined; quorum?: number },
  ): string {
    if (input.confirmBy) return `${nameOf(input.confirmBy)} (it is saved for them)`;
    const anyApprover = this.approversOn(input.platform).length > 0;
    const quorum = input.quorum ?? 1;
    if (quorum > 1) {
      if (this.approversOn(input.platform).length < quorum)
        return `nobody: ${quorum} approvers are needed and fewer are configured`;
      return `${quorum} approvers other than the ${input.requesterCount > 1 ? 'people who asked' : 'requester'}`;
    }
    if (risk === 'medium') {
      if (input.requesterCount > 1) return anyApprover ? 'an approver' : 'nobody: no approver is configured';
      return anyApprover ? 'the requester or an approver' : 'the requester';
    }
    if (risk === 'high') {
      if (!anyApprover) return 'nobody: no approver is configured';
      return input.requesterCount > 1
        ? 'an approver other than the people who asked'
        : 'an approver other than the requester';
    }
    return 'anyone (runs without approval)';
  }
}
