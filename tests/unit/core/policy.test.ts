import { describe, expect, it } from 'vitest';
import {
  decodeConversationKey,
  encodeConversationKey,
} from '../../../src/core/contracts/conversation-key.js';
import type { Person } from '../../../src/core/contracts/events.js';
import { PeopleDirectory } from '../../../src/core/people/index.js';
import { profileApprovers } from '../../../src/core/profiles/index.js';
import { ApprovalPolicy } from '../../../src/core/tools/policy.js';

const slack = (id: string): Person => ({ platform: 'slack', id });
const nobodyListed = new PeopleDirectory([]);

describe('approval policy', () => {
  const policy = new ApprovalPolicy({ slack: ['UAPPROVER', 'UBOSS'], api: ['UAPPROVER'] }, nobodyListed);
  const decide = (risk: 'medium' | 'high', user: Person, requesters = [slack('UREQUESTER')]) =>
    policy.mayDecide({ risk, requesters, user }).allowed;

  it('lets an approver who names a workspace decide only in that workspace, as its member id there', () => {
    const tenants = new ApprovalPolicy({ slack: ['T0AAAAAAA/U0OLGA', 'T0BBBBBBB/U0BEN'] }, nobodyListed);
    const inTeam = (team: string) =>
      encodeConversationKey({ platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: '1.2' });
    const mayDecide = (team: string, user: string) =>
      tenants.mayDecide({
        risk: 'high',
        requesters: [slack('U0ANA')],
        user: slack(user),
        conversationKey: inTeam(team),
      }).allowed;
    expect(mayDecide('T0AAAAAAA', 'U0OLGA')).toBe(true);
    // The same member id in the other workspace is someone else.
    expect(mayDecide('T0BBBBBBB', 'U0OLGA')).toBe(false);
    expect(mayDecide('T0BBBBBBB', 'U0BEN')).toBe(true);
    expect(tenants.approversOn('slack', inTeam('T0AAAAAAA'))).toEqual(['U0OLGA']);
    // A workspace with no approvers of its own has none.
    expect(tenants.approversOn('slack', inTeam('T0CCCCCCC'))).toEqual([]);
    expect(
      tenants.describe('high', {
        platform: 'slack',
        requesters: [slack('U0ANA')],
        conversationKey: inTeam('T0CCCCCCC'),
      }),
    ).toBe('nobody: no approver is configured');
  });

  it('lets a Feishu approver who names a tenant decide only in that tenant', () => {
    const tenants = new ApprovalPolicy({ feishu: ['tenant_a/ou_olga', 'ou_ben'] }, nobodyListed);
    const inTenant = (tenant: string) =>
      encodeConversationKey({ platform: 'feishu', workspace: tenant, channel: 'oc_ops', thread: 'om_1' });
    expect(tenants.approversOn('feishu', inTenant('tenant_a'))).toEqual(['ou_olga', 'ou_ben']);
    expect(tenants.approversOn('feishu', inTenant('tenant_b'))).toEqual(['ou_ben']);
    const feishu = (id: string): Person => ({ platform: 'feishu', id });
    const mayDecide = (tenant: string, user: string) =>
      tenants.mayDecide({
        risk: 'high',
        requesters: [feishu('ou_ana')],
        user: feishu(user),
        conversationKey: inTenant(tenant),
      }).allowed;
    expect(mayDecide('tenant_a', 'ou_olga')).toBe(true);
    expect(mayDecide('tenant_b', 'ou_olga')).toBe(false);
  });

  it('needs approval for anything but low risk', () => {
    expect(policy.needsApproval('low')).toBe(false);
    expect(policy.needsApproval('medium')).toBe(true);
    expect(policy.needsApproval('high')).toBe(true);
    expect(policy.needsApproval('unexpected' as 'low')).toBe(true);
  });

  it('lets the requester or an approver decide medium risk', () => {
    expect(decide('medium', slack('UREQUESTER'))).toBe(true);
    expect(decide('medium', slack('UAPPROVER'))).toBe(true);
    expect(decide('medium', slack('USTRANGER'))).toBe(false);
  });

  it('keeps high risk for an approver other than the requester', () => {
    expect(decide('high', slack('UAPPROVER'))).toBe(true);
    expect(decide('high', slack('UREQUESTER'))).toBe(false);
    expect(decide('high', slack('USTRANGER'))).toBe(false);
    const selfApprover = policy.mayDecide({
      risk: 'high',
      requesters: [slack('UAPPROVER')],
      user: slack('UAPPROVER'),
    });
    expect(selfApprover).toEqual({
      allowed: false,
      reason: expect.stringContaining('other than the person who asked'),
    });
  });

  it('counts everyone a turn answered as a requester', () => {
    // An approver asked, a colleague wrote "ok" last: both are requesters of the turn's calls.
    const shared = [slack('UAPPROVER'), slack('UCOLLEAGUE')];
    expect(decide('high', slack('UAPPROVER'), shared)).toBe(false);
    expect(decide('high', slack('UBOSS'), shared)).toBe(true);
    // A non-approver in a shared turn cannot confirm a medium call someone else may have asked for.
    expect(decide('medium', slack('UCOLLEAGUE'), shared)).toBe(false);
    expect(decide('medium', slack('UAPPROVER'), shared)).toBe(true);
  });

  it('compares people by platform and id', () => {
    // An API key named like a Slack user is not that user, and is an approver only as listed for api.
    expect(decide('medium', { platform: 'api', id: 'UREQUESTER' })).toBe(false);
    expect(decide('high', { platform: 'api', id: 'UAPPROVER' }, [slack('UAPPROVER')])).toBe(true);
    expect(decide('high', { platform: 'api', id: 'UBOSS' })).toBe(false);
  });

  it('leaves a personal call to its person alone', () => {
    const check = {
      risk: 'medium' as const,
      requesters: [slack('UREQUESTER')],
      confirmBy: slack('UREQUESTER'),
    };
    expect(policy.mayDecide({ ...check, user: slack('UREQUESTER') }).allowed).toBe(true);
    expect(policy.mayDecide({ ...check, user: slack('UAPPROVER') }).allowed).toBe(false);
    expect(policy.mayGrant({ ...check, user: slack('UAPPROVER') }).allowed).toBe(false);
  });

  it('never lets a grant cover a high-risk call its grantor asked for, nor one of a removed approver', () => {
    expect(
      policy.grantCovers({ risk: 'high', grantors: [slack('UAPPROVER')], requesters: [slack('UREQUESTER')] }),
    ).toBe(true);
    expect(
      policy.grantCovers({ risk: 'high', grantors: [slack('UAPPROVER')], requesters: [slack('UAPPROVER')] }),
    ).toBe(false);
    expect(
      policy.grantCovers({
        risk: 'medium',
        grantors: [slack('UAPPROVER')],
        requesters: [slack('UAPPROVER')],
      }),
    ).toBe(true);
    expect(
      policy.grantCovers({ risk: 'medium', grantors: [slack('UFORMER')], requesters: [slack('UREQUESTER')] }),
    ).toBe(false);
  });

  it('never lets a two-person grant cover a high-risk call either of its grantors asked for', () => {
    const both = [slack('UAPPROVER'), slack('UBOSS')];
    expect(policy.grantCovers({ risk: 'high', grantors: both, requesters: [slack('UREQUESTER')] })).toBe(
      true,
    );
    expect(policy.grantCovers({ risk: 'high', grantors: both, requesters: [slack('UAPPROVER')] })).toBe(
      false,
    );
    expect(policy.grantCovers({ risk: 'high', grantors: both, requesters: [slack('UBOSS')] })).toBe(false);
    // A grantor who is no longer an approver takes the grant with them.
    expect(
      policy.grantCovers({
        risk: 'medium',
        grantors: [slack('UAPPROVER'), slack('UFORMER')],
        requesters: [slack('UREQUESTER')],
      }),
    ).toBe(false);
  });

  it('describes who may decide on the card', () => {
    const one = [slack('UREQUESTER')];
    const two = [slack('UREQUESTER'), slack('UCOLLEAGUE')];
    expect(
      new ApprovalPolicy({}, nobodyListed).describe('high', { platform: 'slack', requesters: one }),
    ).toContain('no approver is configured');
    expect(policy.describe('medium', { platform: 'slack', requesters: one })).toBe(
      'the requester or an approver',
    );
    expect(policy.describe('medium', { platform: 'slack', requesters: two })).toBe('an approver');
    expect(policy.describe('high', { platform: 'slack', requesters: two })).toBe(
      'an approver other than the people who asked',
    );
  });
});

describe('approval policy with channel profiles', () => {
  const profile = (name: string, channel: string, mode: 'add' | 'replace') => ({
    name,
    platform: 'slack' as const,
    where: { channels: [channel] },
    approvers: { ids: ['ULEAD'], mode },
  });
  const policy = new ApprovalPolicy(
    { slack: ['UAPPROVER'], api: ['admin'] },
    nobodyListed,
    profileApprovers([profile('docs', 'CDOCS', 'add'), profile('ops', 'COPS', 'replace')]),
  );
  const key = (channel: string) => `slack:T1:${channel}:1700000000.000100`;
  const decide = (user: Person, channel: string) =>
    policy.mayDecide({ risk: 'high', requesters: [slack('UREQUESTER')], user, conversationKey: key(channel) })
      .allowed;

  it('adds the profile approvers to the platform approvers, in its channels only', () => {
    expect(decide(slack('ULEAD'), 'CDOCS')).toBe(true);
    expect(decide(slack('UAPPROVER'), 'CDOCS')).toBe(true);
    expect(decide(slack('ULEAD'), 'COTHER')).toBe(false);
    expect(policy.approversOn('slack', key('CDOCS'))).toEqual(['UAPPROVER', 'ULEAD']);
  });

  it('replaces every other approver, API keys included, where it says replace', () => {
    expect(decide(slack('ULEAD'), 'COPS')).toBe(true);
    expect(decide(slack('UAPPROVER'), 'COPS')).toBe(false);
    expect(decide({ platform: 'api', id: 'admin' }, 'COPS')).toBe(false);
    expect(decide({ platform: 'api', id: 'admin' }, 'CDOCS')).toBe(true);
    expect(policy.approversOn('slack', key('COPS'))).toEqual(['ULEAD']);
    expect(
      policy.grantCovers({
        risk: 'high',
        grantors: [slack('UAPPROVER')],
        requesters: [slack('UREQUESTER')],
        conversationKey: key('COPS'),
      }),
    ).toBe(false);
  });

  it('keeps deciding without a conversation as before: the platform list alone', () => {
    expect(policy.isApprover(slack('ULEAD'))).toBe(false);
    expect(policy.isApprover(slack('UAPPROVER'))).toBe(true);
  });
});

describe('conversation keys', () => {
  it('round-trips addresses, including parts with separators', () => {
    const address = { platform: 'feishu' as const, workspace: 'tenant:1', channel: 'oc_1', thread: 'om/2' };
    const key = encodeConversationKey(address);
    expect(key.split(':')).toHaveLength(4);
    expect(decodeConversationKey(key)).toEqual(address);
    expect(
      encodeConversationKey({
        platform: 'slack',
        workspace: 'T1',
        channel: 'C1',
        thread: '1700000000.000100',
      }),
    ).toBe('slack:T1:C1:1700000000.000100');
  });

  it('rejects malformed keys', () => {
    expect(() => decodeConversationKey('slack:T1:C1')).toThrow('Malformed');
    expect(() => decodeConversationKey('irc:a:b:c')).toThrow('Unknown platform');
  });
});
