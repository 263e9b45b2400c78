import { describe, expect, it } from 'vitest';
import { decodeConversationKey, encodeConversationKey } from '../../../src/core/conversation-key.js';
import { ApprovalPolicy } from '../../../src/core/tools/policy.js';

describe('approval policy', () => {
  const policy = new ApprovalPolicy({ slack: ['UAPPROVER'] });
  const requester = { id: 'UREQUESTER' };
  const decide = (risk: 'medium' | 'high', userId: string) =>
    policy.mayDecide({ risk, requester, approverIds: policy.approversOn('slack'), user: { id: userId } })
      .allowed;

  it('needs approval for anything but low risk', () => {
    expect(policy.needsApproval('low')).toBe(false);
    expect(policy.needsApproval('medium')).toBe(true);
    expect(policy.needsApproval('high')).toBe(true);
    expect(policy.needsApproval('unexpected' as 'low')).toBe(true);
  });

  it('lets the requester or an approver decide medium risk', () => {
    expect(decide('medium', 'UREQUESTER')).toBe(true);
    expect(decide('medium', 'UAPPROVER')).toBe(true);
    expect(decide('medium', 'USTRANGER')).toBe(false);
  });

  it('keeps high risk for an approver other than the requester', () => {
    expect(decide('high', 'UAPPROVER')).toBe(true);
    expect(decide('high', 'UREQUESTER')).toBe(false);
    expect(decide('high', 'USTRANGER')).toBe(false);
    const selfApprover = policy.mayDecide({
      risk: 'high',
      requester: { id: 'UAPPROVER' },
      approverIds: ['UAPPROVER'],
      user: { id: 'UAPPROVER' },
    });
    expect(selfApprover).toEqual({
      allowed: false,
      reason: expect.stringContaining('other than the person who asked'),
    });
  });

  it('describes who may decide on the card', () => {
    expect(policy.describe('high', [])).toContain('no approver is configured');
    expect(policy.describe('medium', ['U1'])).toBe('the requester or an approver');
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
