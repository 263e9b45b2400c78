import { decodeConversationKey } from '../contracts/conversation-key.js';
import { type Person, type Platform, platforms } from '../contracts/events.js';
import { distinctPeople, type Identity, type People } from '../contracts/people.js';
import type { Risk } from './tool.js';

/**
 * A Slack id may name its workspace (`T0AAAAAAA/U0BBBBBBB`), a Feishu open_id its tenant (`<tenant key>/ou_…`): it
 * is then an approver only in that workspace's conversations, as the bare id (a member id of one workspace says
 * nothing of another's). Ids without a workspace apply wherever they are listed.
 */
/** The platforms whose approver ids may name their workspace. */
const tenantQualified: readonly Platform[] = ['slack', 'feishu'];

function inWorkspace(ids: readonly string[], conversationKey: string | undefined): string[] {
  // Without a conversation (start-up counts) every id stands as listed: a qualified one matches no bare id.
  if (conversationKey === undefined || !ids.some((id) => id.includes('/'))) return [...ids];
  const { workspace } = decodeConversationKey(conversationKey);
  return ids.flatMap((id) => {
    const slash = id.indexOf('/');
    if (slash < 0) return [id];
    return id.slice(0, slash) === workspace ? [id.slice(slash + 1)] : [];
  });
}

/**
 * Who may let a tool call run. low: at once. medium: an approver, or the requester when the turn answered
 * one person. high: an approver who is none of the people the turn answered (separation of duties).
 * A personal call (a memory saved for someone) is decided by that person alone.
 * Authority is the configured approver list in force now; a conversation's channel profile may add approvers
 * there or replace the list with its own. A person is the unit: someone is an approver when any of their
 * identities is one on its platform, and the requesters, the clicker and the grantors are compared as people
 * (`People`), so one human's Slack click and API key never count as two.
 * Fails closed: any risk other than exactly `low` needs approval, and only the listed cases may decide;
 * an error while deciding propagates and nothing is approved.
 */

export interface DecisionCheck {
  risk: Risk;
  /** The conversation the call was asked in: its channel profile may say who decides there. */
  conversationKey?: string;
  /** Everyone whose message the turn answered, each with the platform of their id. */
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
const notRequester = (people: number, quorum = 1) =>
  `${quorum > 1 ? `This needs ${quorum} approvers` : 'High-risk actions need an approver'} other than the ${people > 1 ? 'people' : 'person'} who asked.`;

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
    /** Who is who: the rooms holding this policy compare people through it, so they never disagree with it. */
    readonly people: People,
    private readonly approversIn: (conversationKey: string) => ConversationApprovers | undefined = () =>
      undefined,
  ) {}

  /**
   * Who may approve on `platform`, by their ids there, in the conversation when it is given (its profile's
   * say included): the ids listed in force there, and the id there of each person who is an approver in force
   * on another platform. Each id is a different person (a person has one id per platform at most).
   */
  approversOn(platform: Platform, conversationKey?: string): string[] {
    const ids = platforms.flatMap((listedOn) =>
      this.listedOn(listedOn, conversationKey).flatMap((id) => {
        const there = this.people.on({ platform: listedOn, id }, platform);
        return there ? [there.id] : [];
      }),
    );
    return [...new Set(ids)];
  }

  /** The ids listed in force on `platform` itself (the conversation's profile's say included). */
  private listedOn(platform: Platform, conversationKey?: string): string[] {
    const own = conversationKey === undefined ? undefined : this.approversIn(conversationKey);
    const profile = own?.platform === platform ? own.ids : [];
    const listed = own?.mode === 'replace' ? profile : [...(this.approvers[platform] ?? []), ...profile];
    return [...new Set(tenantQualified.includes(platform) ? inWorkspace(listed, conversationKey) : listed)];
  }

  /**
   * Whether the person of `identity` is an approver now (a removed approver decides nothing, grants
   * included): any of their identities listed in force on its platform, in the conversation when it is given.
   * Where a profile replaces the approvers, nobody else is one, API keys included.
   */
  isApprover(identity: Identity, conversationKey?: string): boolean {
    return this.approversOn(identity.platform, conversationKey).includes(identity.id);
  }

  /** Whether the person of `identity` is one of `requesters`. */
  private asked(requesters: readonly Identity[], identity: Identity): boolean {
    return requesters.some((requester) => this.people.same(requester, identity));
  }

  needsApproval(risk: Risk): boolean {
    return risk !== 'low';
  }

  /** Whether `check.user` may decide the call; `reason` explains a refusal to the clicker. */
  mayDecide(check: DecisionCheck): Permission {
    const { user } = check;
    if (check.confirmBy)
      return this.people.same(user, check.confirmBy)
        ? allowed
        : refused(`Only ${nameOf(check.confirmBy)} can confirm this: it is saved for them.`);
    const isApprover = this.isApprover(user, check.conversationKey);
    const isRequester = this.asked(check.requesters, user);
    const askers = distinctPeople(this.people, check.requesters).length;
    const quorum = check.quorum ?? 1;
    // Two-person approval: the people who asked never count toward it, whatever the risk.
    if (quorum > 1) {
      if (isRequester) return refused(notRequester(askers, quorum));
      return isApprover ? allowed : refused('You are not allowed to decide this request.');
    }
    if (check.risk === 'medium') {
      if (isApprover || (isRequester && askers === 1)) return allowed;
      // Nobody can tell which of several people asked for the call: someone accountable decides.
      if (isRequester) return refused('Several people asked in this turn: an approver confirms this.');
    }
    if (check.risk === 'high') {
      if (isRequester) return refused(notRequester(askers));
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
    if ((check.risk === 'high' || (check.quorum ?? 1) > 1) && this.asked(check.requesters, check.user))
      return refused(notRequester(distinctPeople(this.people, check.requesters).length, check.quorum));
    return allowed;
  }

  /**
   * Whether a standing approval given by `grantors` lets a call of `risk` asked by `requesters` run without a
   * card: every grantor must still be an approver there, and a high-risk call is never covered for anyone who
   * granted it, through whichever identity (two approvers' grant covers neither of them).
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
      input.risk === 'high' && input.grantors.some((grantor) => this.asked(input.requesters, grantor))
    );
  }

  /** "Who may approve", in words, for cards. */
  describe(
    risk: Risk,
    input: {
      platform: Platform;
      requesters: readonly Person[];
      confirmBy?: Person | undefined;
      quorum?: number;
      conversationKey?: string;
    },
  ): string {
    if (input.confirmBy) return `${nameOf(input.confirmBy)} (it is saved for them)`;
    const approvers = this.approversOn(input.platform, input.conversationKey);
    const anyApprover = approvers.length > 0;
    const quorum = input.quorum ?? 1;
    const several = distinctPeople(this.people, input.requesters).length > 1;
    if (quorum > 1) {
      if (approvers.length < quorum) return `nobody: ${quorum} approvers are needed and fewer are configured`;
      return `${quorum} approvers other than the ${several ? 'people who asked' : 'requester'}`;
    }
    if (risk === 'medium') {
      if (several) return anyApprover ? 'an approver' : 'nobody: no approver is configured';
      return anyApprover ? 'the requester or an approver' : 'the requester';
    }
    if (risk === 'high') {
      if (!anyApprover) return 'nobody: no approver is configured';
      return several ? 'an approver other than the people who asked' : 'an approver other than the requester';
    }
    return 'anyone (runs without approval)';
  }
}
