import type { ChatAdapter } from '../core/contracts/adapter.js';
import type { Platform } from '../core/contracts/events.js';

/** Where each workspace's calls go: the adapter of the installation (or app) serving it, or none. */
export type AdapterOf = (workspace: string) => Promise<ChatAdapter | undefined>;

/** The platform's error for a call that cannot be made: `not_installed`, or `not_supported` by the adapter. */
export type RoutingError = (operation: string, code: 'not_installed' | 'not_supported') => Error;

/**
 * The one adapter the core sees when Butler serves a platform through several installations (Slack workspaces,
 * Feishu apps and tenants): every call goes to the adapter serving its conversation's workspace, so it carries
 * that workspace's token and nobody else's. A workspace Butler does not serve gets nothing sent
 * (`not_installed`); what only shows state (indicators, session status, names) is skipped instead.
 */
export function routedAdapter(platform: Platform, adapterOf: AdapterOf, fail: RoutingError): ChatAdapter {
  async function adapterFor(workspace: string): Promise<ChatAdapter> {
    const installed = await adapterOf(workspace);
    if (!installed) throw fail('installation', 'not_installed');
    return installed;
  }
  /** Cosmetic calls never throw: a workspace gone meanwhile has nothing to show. */
  async function cosmetic<T>(workspace: string, call: (adapter: ChatAdapter) => Promise<T> | undefined) {
    const installed = await adapterOf(workspace).catch(() => undefined);
    return installed ? call(installed) : undefined;
  }

  return {
    platform,
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
    turnWaiting: async (target, waiting) => {
      await cosmetic(target.address.workspace, (adapter) => adapter.turnWaiting?.(target, waiting));
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
      if (!adapter.fetchFile) throw fail('files', 'not_supported');
      return adapter.fetchFile(file, options);
    },
    sendFile: async (target, file) => {
      const adapter = await adapterFor(target.address.workspace);
      if (!adapter.sendFile) throw fail('files', 'not_supported');
      return adapter.sendFile(target, file);
    },
    openDirectConversation: async (user, workspace, note) => {
      const adapter = await adapterFor(workspace);
      if (!adapter.openDirectConversation) throw fail('direct conversation', 'not_supported');
      return adapter.openDirectConversation(user, workspace, note);
    },
    postInputForm: async (target, form) => {
      const adapter = await adapterFor(target.address.workspace);
      if (!adapter.postInputForm) throw fail('forms', 'not_supported');
      return adapter.postInputForm(target, form);
    },
    sendPrivateLink: async (target, user, link) => {
      const adapter = await adapterFor(target.address.workspace);
      if (!adapter.sendPrivateLink) throw fail('private link', 'not_supported');
      return adapter.sendPrivateLink(target, user, link);
    },
    nameOf: async (userId, workspace) =>
      cosmetic(workspace, (adapter) => adapter.nameOf?.(userId, workspace)),
    messageSearch: {
      search: async (workspace, request, credential, signal) => {
        const adapter = await adapterFor(workspace);
        if (!adapter.messageSearch) throw fail('search', 'not_supported');
        return adapter.messageSearch.search(workspace, request, credential, signal);
      },
      // Unknown (and so private) where the workspace is gone or cannot say.
      audienceOf: async (workspace, conversationId) =>
        cosmetic(workspace, (adapter) => adapter.messageSearch?.audienceOf(workspace, conversationId)),
    },
  };
}
