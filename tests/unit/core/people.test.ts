import { describe, expect, it } from 'vitest';
import type { Person } from '../../../src/core/contracts/events.js';
import { distinctPeople } from '../../../src/core/contracts/people.js';
import { PeopleDirectory } from '../../../src/core/people/index.js';
import { profileApprovers } from '../../../src/core/profiles/index.js';
import { ApprovalPolicy } from '../../../src/core/tools/policy.js';

/**
 * One person across platforms (`people:`): the directory, and the approval policy comparing people through it.
 * Olga is Slack's U0OLGA, Feishu's ou_olga and the API key olga; Pat and Quinn are approvers too.
 */

const slack = (id: string): Person => ({ platform: 'slack', id });
const api = (id: string): Person => ({ platform: 'api', id });
const feishu = (id: string): Person => ({ platform: 'feishu', id });

const people = new PeopleDirectory([
  { name: 'olga', slack: 'U0OLGA', feishu: 'ou_olga', api: 'olga' },
  { name: 'pat', slack: 'U0PAT', api: 'pat-key' },
  { name: 'quinn', api: 'quinn' },
]);

describe('the people directory', () => {
  it('keys a listed identity by its person, an unlisted one by itself', () => {
    expect(people.keyOf(slack('U0OLGA'))).toBe('person:olga');
    expect(people.keyOf(api('olga'))).toBe('person:olga');
    expect(people.keyOf(slack('U0ALICE'))).toBe('slack:U0ALICE');
    expect(people.nameOf(feishu('ou_olga'))).toBe('olga');
    expect(people.nameOf(slack('U0ALICE'))).toBeUndefined();
  });

  it("compares people, not identities: ids stay their platform's", () => {
    expect(people.same(slack('U0OLGA'), api('olga'))).toBe(true);
    expect(people.same(feishu('ou_olga'), slack('U0OLGA'))).toBe(true);
    expect(people.same(slack('U0OLGA'), slack('U0PAT'))).toBe(false);
    // An API key named like Olga's Slack id is not Olga, and neither is a Slack user named like her key.
    expect(people.same(api('U0OLGA'), slack('U0OLGA'))).toBe(false);
    expect(people.same(slack('olga'), api('olga'))).toBe(false);
    expect(people.same(slack('U0ALICE'), slack('U0ALICE'))).toBe(true);
  });

  it("lists a person's identities, the given one first, and finds their identity on a platform", () => {
    expect(people.identitiesOf(api('olga'))).toEqual([api('olga'), slack('U0OLGA'), feishu('ou_olga')]);
    expect(people.identitiesOf(slack('U0ALICE'))).toEqual([slack('U0ALICE')]);
    expect(people.on(api('olga'), 'slack')).toEqual(slack('U0OLGA'));
    expect(people.on(slack('U0OLGA'), 'slack')).toEqual(slack('U0OLGA'));
    expect(people.on(api('quinn'), 'slack')).toBeUndefined();
    expect(people.on(slack('U0ALICE'), 'api')).toBeUndefined();
  });

  it('keeps the first identity of each person, in order', () => {
    const identities = [api('olga'), slack('U0ALICE'), slack('U0OLGA'), slack('U0PAT'), feishu('ou_olga')];
    expect(distinctPeople(people, identities)).toEqual([api('olga'), slack('U0ALICE'), slack('U0PAT')]);
  });

  it('compares every identity as itself when nobody is listed', () => {
    const nobody = new PeopleDirectory([]);
    expect(nobody.same(slack('U0OLGA'), api('olga'))).toBe(false);
    expect(nobody.keyOf(api('olga'))).toBe('api:olga');
    expect(nobody.identitiesOf(slack('U0OLGA'))).toEqual([slack('U0OLGA')]);
  });
});

describe('the approval policy with people', () => {
  const policy = new ApprovalPolicy({ slack: ['U0OLGA', 'U0BOSS'], api: ['quinn'] }, people);
  const high = (user: Person, requesters: Person[], quorum = 1) =>
    policy.mayDecide({ risk: 'high', requesters, user, quorum });

  it("refuses olga's API key a high-risk call olga asked for on Slack", () => {
    expect(high(api('olga'), [slack('U0OLGA')])).toEqual({
      allowed: false,
      reason: 'High-risk actions need an approver other than the person who asked.',
    });
    expect(high(feishu('ou_olga'), [slack('U0OLGA')]).allowed).toBe(false);
    expect(high(slack('U0BOSS'), [api('olga')]).allowed).toBe(true);
    expect(policy.mayGrant({ risk: 'high', requesters: [api('olga')], user: slack('U0OLGA') }).allowed).toBe(
      false,
    );
  });

  it('makes a person an approver through any of their identities', () => {
    // Olga is listed on Slack: her key and her Feishu id are approvers too.
    expect(policy.isApprover(api('olga'))).toBe(true);
    expect(policy.isApprover(feishu('ou_olga'))).toBe(true);
    expect(high(api('olga'), [slack('U0ALICE')]).allowed).toBe(true);
    // Quinn is listed as a key only; Pat is listed nowhere, whichever identity.
    expect(policy.isApprover(api('quinn'))).toBe(true);
    expect(policy.isApprover(slack('U0PAT'))).toBe(false);
    expect(policy.isApprover(api('pat-key'))).toBe(false);
    // Cards and reminders reach approvers by their id on the request's platform.
    expect(policy.approversOn('slack')).toEqual(['U0OLGA', 'U0BOSS']);
    expect(policy.approversOn('api')).toEqual(['olga', 'quinn']);
    expect(policy.approversOn('feishu')).toEqual(['ou_olga']);
  });

  it('keeps a channel profile that replaces the approvers in force, whichever identity', () => {
    const profiled = new ApprovalPolicy(
      { slack: ['U0OLGA'], api: ['quinn'] },
      people,
      profileApprovers([
        {
          name: 'ops',
          platform: 'slack',
          where: { channels: ['COPS'] },
          approvers: { ids: ['U0PAT'], mode: 'replace' },
        },
      ]),
    );
    const ops = 'slack:T1:COPS:1700000000.000100';
    expect(profiled.isApprover(api('olga'), ops)).toBe(false);
    expect(profiled.isApprover(api('quinn'), ops)).toBe(false);
    // Pat decides there, with his Slack id or his key.
    expect(profiled.isApprover(api('pat-key'), ops)).toBe(true);
    expect(profiled.isApprover(api('olga'))).toBe(true);
  });

  it('never lets one person meet a quorum as a requester, nor count several identities as several people', () => {
    expect(high(api('olga'), [slack('U0OLGA')], 2)).toEqual({
      allowed: false,
      reason: 'This needs 2 approvers other than the person who asked.',
    });
    // Olga and her key asking in one turn are one person asking: medium risk is hers to confirm.
    const both = [slack('U0OLGA'), api('olga')];
    expect(policy.mayDecide({ risk: 'medium', requesters: both, user: feishu('ou_olga') }).allowed).toBe(
      true,
    );
    expect(policy.describe('high', { platform: 'slack', requesters: both })).toBe(
      'an approver other than the requester',
    );
    expect(
      policy.describe('high', { platform: 'slack', requesters: [slack('U0OLGA'), slack('U0ALICE')] }),
    ).toBe('an approver other than the people who asked');
  });

  it("lets a personal call be confirmed by its person's other identity, and nobody else", () => {
    const check = { risk: 'medium' as const, requesters: [slack('U0OLGA')], confirmBy: slack('U0OLGA') };
    expect(policy.mayDecide({ ...check, user: api('olga') }).allowed).toBe(true);
    expect(policy.mayDecide({ ...check, user: slack('U0BOSS') }).allowed).toBe(false);
  });

  it('never lets a grant cover a high-risk call its grantor asked for through another identity', () => {
    expect(policy.grantCovers({ risk: 'high', grantors: [slack('U0OLGA')], requesters: [api('olga')] })).toBe(
      false,
    );
    expect(
      policy.grantCovers({ risk: 'high', grantors: [api('olga')], requesters: [slack('U0ALICE')] }),
    ).toBe(true);
  });
});
