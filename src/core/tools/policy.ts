import { type Person, type Platform, samePerson } from '../contracts/events.js';
import type { Risk } from './tool.js';

/**
 * Who may let a tool call run. low: at once. medium: an approver, or the requester when the turn answered
 * one person. high: an approver who is none of the people the turn answered (separation of duties).
 * A personal call (a memory saved for someone) is decided by that person alone.
 * Authority is the configured approver list in force now, compared by platform and id; a conversation's
 * channel profile may add approvers there or replace the list with its own.
 * Fails closed: any risk other than exactly `low` needs approval, and only the listed cases may decide;
 * an error while deciding propagates and nothing is approved.
 */

export interface DecisionCheck {
  risk: Risk;
  /** The conversation the call was asked in: its channel profile may say who decides there. */
  conversationKey?: string;
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

/** A channel profile's approvers: besides the platform's (`add`), or instead of everyone else's (`replace`). */
export interface ConversationApprovers {
  /** The conversation's platform, where these ids belong. */
  platform: Platform;
  ids: readonly string[];
  mode: 'add' | 'replace';
}

export class ApprovalPolicy {
  constructor(
    private readonly approvers: Readonly<Partial<Record<Platform, readonly string[]>>>,
    private readonly approversIn: (conversationKey: string) => ConversationApprovers | undefined = () =>
      undefined,
  ) {}

  /** Who may approve on `platform`, in the conversation when it is given (its profile's say included). */
  approversOn(platform: Platform, conversationKey?: string): string[] {
    const own = conversationKey === undefined ? undefined : this.approversIn(conversationKey);
    const profile = own?.platform === platform ? own.ids : [];
    if (own?.mode === 'replace') return [...profile];
    return [...new Set([...(this.approvers[platform] ?? []), ...profile])];
  }

  /**
   * Whether `person` is an approver now (a removed approver decides nothing, grants included), in the
   * conversation when it is given: where a profile replaces the approvers, nobody else is one, API keys
   * included.
   */
  isApprover(person: Pick<Person, 'platform' | 'id'>, conversationKey?: string): boolean {
    return this.approversOn(person.platform, conversationKey).includes(person.id);
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
    const isApprover = this.isApprover(user, check.conversationKey);
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
    if (!this.isApprover(check.user, check.conversationKey))
      return refused('Only an approver can approve a tool for the whole conversation.');
    const asked = check.requesters.some((requester) => samePerson(requester, check.user));
    if ((check.risk === 'high' || (check.quorum ?? 1) > 1) && asked)
      return refused(notRequester(check.requesters, check.quorum));
    return allowed;
  }

  /**
   * Whether a standing approval given by `grantors` lets a call of `risk` asked by `requesters` run without a
   * card: every grantor must still be an approver there, and a high-risk call is never covered for anyone who
   * granted it (two approvers' grant covers neither of them).
   */
  grantCovers(input: {
    risk: Risk;
    grantors: readonly Person[];
    requesters: readonly Person[];
    conversationKey?: string;
  }): boolean {
    if (input.grantors.length === 0) return false;
    if (!input.grantors.every((grantor) => this.isApprover(grantor, input.conversationKey))) return false;
    return !(
      input.risk === 'high' &&
      input.requesters.some((person) => input.grantors.some((grantor) => samePerson(person, grantor)))
    );
  }

  /** "Who may approve", in words, for cards. */
  describe(
    risk: Risk,
    input: {
      platform: Platform;
      requesterCount: number;
      confirmBy?: Person | undefined;
      quorum?: number;
      conversationKey?: string;
    },
  ): string {
    if (input.confirmBy) return `${nameOf(input.confirmBy)} (it is saved for them)`;
    const approvers = this.approversOn(input.platform, input.conversationKey);
    const anyApprover = approvers.length > 0;
    const quorum = input.quorum ?? 1;
    if (quorum > 1) {
      if (approvers.length < quorum) return `nobody: ${quorum} approvers are needed and fewer are configured`;
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
