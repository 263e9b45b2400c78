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
          message: `${id} is not in approvers.${platform}: escalation sends them a card they could not decide`,
        });
  return issues;
}
