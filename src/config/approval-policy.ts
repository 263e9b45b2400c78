import { z } from 'zod';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { duration } from './schedules.js';

/**
 * `approvalPolicy:` in the config file: how many approvers a call of each risk needs, whom to remind and
 * escalate to while a request waits, and what expiry means (docs/policy.md, "Two-person approvals").
 */

const people = z.array(z.string().min(1)).max(50);

export const approvalPolicySchema = z
  .object({
    /** Distinct approvers a call of this risk needs (requesters never count); default 1. */
    quorum: z
      .object({
        medium: z.number().int().min(1).max(10).optional(),
        high: z.number().int().min(1).max(10).optional(),
      })
      .strict()
      .prefault({}),
    /** Direct-message the allowed approvers who have not decided, once, this long after the card. */
    remindAfter: duration.optional(),
    /** Then direct-message `escalateTo`, once, this long after the card. */
    escalateAfter: duration.optional(),
    /** Per platform: Slack member ids, Feishu open_ids (terminal names for the terminal chat). */
    escalateTo: z
      .object({ slack: people.optional(), feishu: people.optional(), console: people.optional() })
      .strict()
      .prefault({}),
    /** What a request nobody decided in time means for the turn: `expire` (it did not run) or `reject`. */
    onExpiry: z.enum(['expire', 'reject']).default('expire'),
  })
  .strict()
  .prefault({});

export type ApprovalPolicyConfig = z.infer<typeof approvalPolicySchema>;

/**
 * What the policy asks that the rest of the config cannot give: escalation needs someone to escalate to, who
 * must be an approver to decide what they are sent; a quorum needs that many approvers.
 */
export function approvalPolicyIssues(file: {
  approvalPolicy: ApprovalPolicyConfig;
  approvers: Readonly<Record<'slack' | 'feishu' | 'console' | 'api', readonly string[]>>;
}): ConfigIssue[] {
  const { approvalPolicy: policy, approvers } = file;
  const issues: ConfigIssue[] = [];
  const escalated = Object.values(policy.escalateTo).flatMap((ids) => ids ?? []);
  if (policy.escalateAfter !== undefined && escalated.length === 0)
    issues.push({
      variable: 'config file: approvalPolicy.escalateTo',
      message: 'escalateAfter is set but escalateTo names nobody (give Slack or Feishu user ids)',
    });
  for (const platform of ['slack', 'feishu', 'console'] as const)
    for (const id of policy.escalateTo[platform] ?? [])
      if (!approvers[platform].includes(id))
        issues.push({
          variable: `config file: approvalPolicy.escalateTo.${platform}`,
          message: `${id} is not an approver on ${platform} (approvers.${platform}, or a person listed in people who is one): escalation sends them a card they could not decide`,
        });
  return issues;
}

/**
 * Start-up warnings: a channel profile that puts its own approvers in place (`approversMode: replace`) leaves
 * out the on-call people `escalateTo` names who are not among them. Butler escalates only to people who may
 * decide a request, so that profile's requests escalate to nobody.
 */
export function escalationWarnings(file: {
  approvalPolicy: ApprovalPolicyConfig;
  channels: ReadonlyArray<{
    name: string;
    platform: string;
    approvers?: readonly string[] | undefined;
    approversMode?: 'add' | 'replace' | undefined;
  }>;
}): string[] {
  const { escalateAfter, escalateTo } = file.approvalPolicy;
  if (escalateAfter === undefined) return [];
  return file.channels.flatMap((profile) => {
    if (profile.approversMode !== 'replace') return [];
    const onCall = escalateTo[profile.platform as keyof typeof escalateTo] ?? [];
    const left = onCall.filter((id) => !(profile.approvers ?? []).includes(id));
    return left.length > 0
      ? [
          `channel profile ${profile.name}: escalateTo ${left.join(', ')} may not decide its requests (approversMode replace), so they are not sent them`,
        ]
      : [];
  });
}
