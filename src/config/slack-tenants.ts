import type { ConfigIssue } from '../core/contracts/errors.js';
import type { FileConfig } from './file.js';
import type { SlackConfig } from './types.js';

/** A Slack member id with its workspace: `T0AAAAAAA/U0BBBBBBB` (or `W…` on Enterprise Grid). */
const qualifiedSlackId = /^[TE][A-Z0-9]+\/[UW][A-Z0-9]+$/;

/**
 * With installs over OAuth Butler serves several workspaces, and a member id names a person only within one:
 * the same `U…` in another workspace is someone else. So every Slack id that decides or spends must name its
 * workspace there (`T…/U…`); where Butler cannot yet tell workspaces apart (people, allowlisted users, escalation,
 * per-person connections, user and channel budgets) Slack ids are refused. One issue per id, naming it.
 */
export function slackTenantIssues(file: FileConfig, slack: SlackConfig | undefined): ConfigIssue[] {
  if (!slack?.install) return [];
  const issues: ConfigIssue[] = [];
  const bare = (variable: string, ids: readonly string[] | undefined) => {
    for (const id of ids ?? [])
      if (!qualifiedSlackId.test(id))
        issues.push({
          variable,
          message: `${id} names no workspace: with installs over OAuth write it T…/${id} (the workspace's team id)`,
        });
  };
  bare('config file: approvers.slack', file.approvers.slack);
  for (const [index, channel] of file.channels.entries())
    if (channel.platform === 'slack' && channel.workspace === undefined)
      bare(`config file: channels.${index}.approvers`, channel.approvers);
  const notYet = (variable: string, what: string) =>
    issues.push({
      variable,
      message: `${what} cannot name a workspace yet: with installs over OAuth, leave it out`,
    });
  for (const [index, person] of file.people.entries())
    if (person.slack !== undefined)
      notYet(`config file: people.${index}.slack`, 'a Slack identity in people');
  if (file.access.slack?.users !== undefined)
    notYet('config file: access.slack.users', 'a Slack user allowlist');
  if (file.approvalPolicy.escalateTo.slack !== undefined)
    notYet('config file: approvalPolicy.escalateTo.slack', 'escalation to Slack members');
  // A person's connection is keyed by who they are: a Slack member id alone would let the same id in another
  // workspace act with their account.
  for (const [index, server] of file.mcpServers.entries())
    if (server.oauth?.identity === 'person')
      issues.push({
        variable: `config file: mcpServers.${index}.oauth.identity`,
        message:
          'per-person connections cannot tell Slack workspaces apart yet: with installs over OAuth use `shared`',
      });
  for (const [index, budget] of file.budgets.entries())
    if (budget.platform === 'slack' && budget.scope !== 'workspace')
      notYet(`config file: budgets.${index}`, `a Slack ${budget.scope} budget`);
  return issues;
}
