import type { Platform } from '../core/contracts/events.js';
import { includeFilter } from '../core/tools/name-patterns.js';
import { enabledPlatforms } from './index.js';
import type { AppConfig } from './types.js';

/**
 * The policy half of the start-up banner: who approves where, two-person rules, reminders, channel profiles,
 * budgets, config tasks and agents, each with the platform it is for, and a warning for whatever can never
 * apply (a policy for a platform that is off, an agent naming no tool Butler has).
 */

type Line = (name: string, state: string, hint?: string) => string;

const durations = (ms: number) =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;

export function policyLines(
  config: AppConfig,
  facts: { tools: readonly string[]; demo?: { approver: boolean } | undefined },
  line: Line,
): { lines: string[]; warnings: string[] } {
  const { file } = config;
  // The terminal chat (`console`) answers where its process runs; the service never serves it.
  const on = new Set<Platform>([...enabledPlatforms(config), 'console']);
  const lines: string[] = [];
  const warnings: string[] = [];
  const offWarning = (what: string, platform: Platform) => {
    if (!on.has(platform)) warnings.push(`${what} is for ${platform}, which is off: it never applies`);
  };

  const approvers = Object.entries(file.approvers)
    .filter(([, ids]) => ids.length > 0)
    .map(([platform, ids]) => `${platform}: ${ids.join(', ')}`);
  lines.push(
    line(
      'approvers',
      approvers.join('; ') || 'none: medium risk is decided by the requester, high risk by nobody',
      facts.demo?.approver ? '/as demo-approver in npm run chat decides the demo cards' : undefined,
    ),
  );
  for (const [platform, ids] of Object.entries(file.approvers))
    if (ids.length > 0) offWarning(`approvers.${platform}`, platform as Platform);

  const { approvalPolicy: policy } = file;
  const quorum = Object.entries(policy.quorum).filter(([, count]) => (count ?? 1) > 1);
  if (quorum.length > 0)
    lines.push(
      line('two-person', quorum.map(([risk, count]) => `${risk} risk needs ${count} approvers`).join(', ')),
    );
  if (policy.remindAfter !== undefined || policy.escalateAfter !== undefined) {
    const parts = [
      policy.remindAfter !== undefined ? `remind after ${durations(policy.remindAfter)}` : undefined,
      policy.escalateAfter !== undefined
        ? `escalate after ${durations(policy.escalateAfter)} to ${Object.entries(policy.escalateTo)
            .map(([platform, ids]) => `${platform}: ${(ids ?? []).join(', ')}`)
            .join('; ')}`
        : undefined,
    ];
    lines.push(line('reminders', parts.filter(Boolean).join(', ')));
  }

  for (const profile of config.channels) {
    const where =
      'workspace' in profile.where
        ? `workspace ${profile.where.workspace}`
        : profile.where.channels.join(', ');
    lines.push(line(`profile ${profile.name}`, `${profile.platform} ${where}`));
    offWarning(`channel profile ${profile.name}`, profile.platform);
  }
  for (const budget of file.budgets) {
    const limit =
      budget.tokensPerDay !== undefined
        ? `${budget.tokensPerDay} tokens a day`
        : budget.costPerDay !== undefined
          ? `$${budget.costPerDay} a day`
          : `$${budget.costPerMonth} a month`;
    const then = budget.onExceeded === 'approve' ? 'an approver lets it go on' : 'it stops answering';
    const subject = budget.name ?? `${budget.scope} ${budget.id}`;
    lines.push(line('budget', `${subject} on ${budget.platform}: ${limit}; when spent, ${then}`));
    offWarning(`the budget of ${budget.scope} ${budget.id}`, budget.platform);
  }
  for (const task of file.schedules.tasks)
    offWarning(`the scheduled task ${task.name}`, task.conversation.platform);

  // MCP tools may connect later: only patterns over Butler's own and HTTP tools are checked here.
  for (const agent of config.agents)
    for (const pattern of agent.tools)
      if (!pattern.includes('__') && !facts.tools.some(includeFilter([pattern])))
        warnings.push(`agent ${agent.name}: "${pattern}" matches none of Butler's tools`);
  return { lines, warnings };
}
