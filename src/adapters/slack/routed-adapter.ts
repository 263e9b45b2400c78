import type { ChatAdapter } from '../../core/contracts/adapter.js';
import { SlackApiError } from './slack-api-error.js';
import type { SlackWorkspace } from './workspace.js';

/** Where each workspace's calls go: its installation's parts, or none when Butler is not installed there. */
export type WorkspaceOf = (workspace: string) => Promise<SlackWorkspace | undefined>;

/**
 * The one Slack adapter the core sees when Butler serves several workspaces: every call goes to the adapter
 * of the installation of its conversation's workspace, so it carries that workspace's token and nobody
 * else's. A workspace Butler is no longer installed in gets nothing sent (`not_installed`); what only shows
 * state (indicators, session status, names) is skipped instead.
 */
export function routedSlackAdapter(workspaceOf: WorkspaceOf): ChatAdapter {
  async function adapterFor(workspace: string): Promise<ChatAdapter> {
    const installed = await workspaceOf(workspace);
    if (!installed) throw new SlackApiError('installation', 'not_installed');
    return installed.adapter;
  }
  /** Cosmetic calls never throw: a workspace gone meanwhile has nothing to show. */
  async function cosmetic<T>(workspace: string, call: (adapter: ChatAdapter) => Promise<T> | undefined) {
    const installed = await workspaceOf(workspace).catch(() => undefined);
    return installed ? call(installed.adapter) : undefined;
  }

  return {
    platform: 'slack',
    openReply: async (target, options) =>
      (await adapterFor(target.address.workspace)).openReply(target, options),
    postNotice: async (target, text) => (await adapterFor(target.address.workspace)).postNotice(target, text),
    postApprovalCard: async (target, card) =>
      (await adapterFor(target.address.workspace)).postApprovalCard(target, card),
    updateApprovalCard: async (address, messageId, card) =>
      (await adapterFor(address.workspace)).updateApprovalCard(address, messageId, card),
    showWorking: async (target) =>
      (await cosmetic(target.address.workspace, (adapter) => adapter.showWorking(target))) ??
      (async () => {}),
    showProgress: async (target, status) => {
      await cosmetic(target.address.workspace, (adapter) => adapter.showProgress?.(target, status));
    },
    turnStarted: async (target, start) => {
      await cosmetic(target.address.workspace, (adapter) => adapter.turnStarted?.(target, start));
    },
    turnEnded: async (target, outcome) => {
      await cosmetic(target.address.workspace, (adapter) => adapter.turnEnded?.(target, outcome));
    },
    onTurnEvent: async (target, event) => {
      await cosmetic(target.address.workspace, (adapter) => adapter.onTurnEvent?.(target, event));
    },
    findUnrecordedReplies: async (target, options) =>
      (await (await adapterFor(target.address.workspace)).findUnrecordedReplies?.(target, options)) ?? [],
    prepare: async (message, options) => {
      const adapter = await adapterFor(message.address.workspace);
      return adapter.prepare ? adapter.prepare(message, options) : { message };
    },
    fetchFile: async (file, options) => {
      const adapter = await adapterFor(options.workspace);
      if (!adapter.fetchFile) throw new SlackApiError('files', 'not_supported');
      return adapter.fetchFile(file, options);
    },
    sendFile: async (target, file) => {
      const adapter = await adapterFor(target.address.workspace);
      if (!adapter.sendFile) throw new SlackApiError('files', 'not_supported');
      return adapter.sendFile(target, file);
    },
    openDirectConversation: async (user, workspace, note) => {
      const adapter = await adapterFor(workspace);
      if (!adapter.openDirectConversation) throw new SlackApiError('conversations.open', 'not_supported');
      return adapter.openDirectConversation(user, workspace, note);
    },
    sendPrivateLink: async (target, user, link) => {
      const adapter = await adapterFor(target.address.workspace);
      if (!adapter.sendPrivateLink) throw new SlackApiError('chat.postEphemeral', 'not_supported');
      return adapter.sendPrivateLink(target, user, link);
    },
    nameOf: async (userId, workspace) =>
      cosmetic(workspace, (adapter) => adapter.nameOf?.(userId, workspace)),
  };
}
