import type { Person, Platform } from './events.js';

/**
 * Who is who across platforms. The configuration's `people:` says that Slack's `U0OLGA`, Feishu's `ou_olga`
 * and the API key `olga` are one person; an identity nobody listed is a person of its own. A person is the
 * unit of authority: requesters, approvers, quorum, separation of duties, grants, budgets, schedules' owners
 * and connections all compare people, never raw identities.
 */

/** One identity: an id on a platform (a Slack user, a Feishu open_id, an API key name, the terminal's user). */
export type Identity = Pick<Person, 'platform' | 'id'>;

export interface People {
  /**
   * The stable key of whoever `identity` is: `person:<name>` for a listed person, `<platform>:<id>` for an
   * unlisted identity. Stored where a person owns something (a connection).
   */
  keyOf(identity: Identity): string;
  /** Whether two identities are one person. */
  same(left: Identity, right: Identity): boolean;
  /** The listed person's name, or undefined for an unlisted identity. */
  nameOf(identity: Identity): string | undefined;
  /** Every identity of the person, the given one first (only it when unlisted). */
  identitiesOf(identity: Identity): Person[];
  /** The person's identity on `platform`, when they have one there (the given one when it is on `platform`). */
  on(identity: Identity, platform: Platform): Person | undefined;
}

/** An identity's own key, `<platform>:<id>`: what `People.keyOf` gives for an identity nobody listed. */
export const identityKey = (identity: Identity) => `${identity.platform}:${identity.id}`;

/**
 * Whom a message counts toward (rate limits, fair turns): the person. A Slack member nobody listed is someone only
 * within their workspace: the same member id in another workspace is another person, with limits of their own.
 */
export function senderKey(people: People, identity: Identity, workspace: string): string {
  const key = people.keyOf(identity);
  return identity.platform === 'slack' && key === identityKey(identity) ? `${key}@${workspace}` : key;
}

/**
 * Every key a record of `identity`'s person may carry: the person's, then each of their identities' (records
 * saved before `people:` listed them).
 */
export function keysOfPerson(people: People, identity: Identity): string[] {
  return [...new Set([people.keyOf(identity), ...people.identitiesOf(identity).map(identityKey)])];
}

/** Distinct people among `identities`, the first identity of each kept, in order. */
export function distinctPeople<T extends Identity>(people: People, identities: readonly T[]): T[] {
  const kept: T[] = [];
  for (const identity of identities)
    if (!kept.some((other) => people.same(other, identity))) kept.push(identity);
  return kept;
}
