import { z } from 'zod';
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
    escalateTo: z.object({ slack: people.optional(), feishu: people.optional() }).strict().prefault({}),
    /** What a request nobody decided in time means for the turn: `expire` (it did not run) or `reject`. */
    onExpiry: z.enum(['expire', 'reject']).default('expire'),
  })
  .strict()
  .prefault({});

export type ApprovalPolicyConfig = z.infer<typeof approvalPolicySchema>;
