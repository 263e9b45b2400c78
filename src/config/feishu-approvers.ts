import type { ConfigIssue } from '../core/contracts/errors.js';
import type { FileConfig } from './file.js';

/** A Feishu approver who names the tenant they decide in: `<tenant key>/ou_…`. */
const qualifiedOpenId = /^[^/\s]+\/ou_[A-Za-z0-9]+$/;

/**
 * Feishu approvers (`approvers.feishu`, a Feishu channel profile's) are open_ids, or open_ids that name their
 * tenant: an id with a `/` that is not `<tenant key>/ou_…` would match nobody, silently.
 */
export function feishuApproverIssues(file: FileConfig): ConfigIssue[] {
  const lists: Array<[string, readonly string[]]> = [
    ['config file: approvers.feishu', file.approvers.feishu],
    ...file.channels.flatMap(
      (channel, index): Array<[string, readonly string[]]> =>
        channel.platform === 'feishu'
          ? [[`config file: channels.${index}.approvers`, channel.approvers ?? []]]
          : [],
    ),
  ];
  return lists.flatMap(([variable, ids]) =>
    ids
      .filter((id) => id.includes('/') && !qualifiedOpenId.test(id))
      .map((id) => ({ variable, message: `${id}: write a Feishu approver ou_… or <tenant key>/ou_…` })),
  );
}
