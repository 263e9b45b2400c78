import type { PreparedMessage } from '../../core/contracts/adapter.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { InboundMessage, ThreadContextMessage } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import { graphemePrefix } from '../../core/text/index.js';
import { messageContent } from './attachments.js';
import { mentionedUserIds, replaceMentions } from './inbound-text.js';
import type { BotIdentity } from './normalize.js';
import { sharedFiles } from './shared-files.js';
import { errorFields, type SlackApi, type SlackProfile, type SlackThreadMessage } from './slack-api.js';

/** How many earlier thread messages a conversation that starts inside a thread gets as context. */
export const threadContextSize = 20;
const threadContextPages = 5;
const contextMessageChars = 3000;
const nameCacheTtlMs = 60 * 60 * 1000;
const nameCacheSize = 2000;

/** users.info lookups, cached: one name and time zone per user per hour. */
export class UserNames {
  private readonly cache = new Map<string, { profile: SlackProfile; at: number }>();

  constructor(
    private readonly api: SlackApi,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async get(userId: string): Promise<string | undefined> {
    return (await this.profile(userId)).name;
  }

  /** Name and time zone from one users.info answer; on failure what was known before (or nothing). */
  async profile(userId: string): Promise<SlackProfile> {
    const hit = this.cache.get(userId);
    if (hit && this.now() - hit.at < nameCacheTtlMs) return hit.profile;
    let profile: SlackProfile;
    try {
      profile = await this.api.userProfile(userId);
    } catch (error) {
      this.logger.debug(
        { platform: 'slack', user: userId, ...errorFields(error) },
        'users.info failed; keeping the id',
      );
      return hit?.profile ?? { name: undefined, timezone: undefined };
    }
    if (this.cache.size >= nameCacheSize) this.cache.clear();
    this.cache.set(userId, { profile, at: this.now() });
    return profile;
  }

  async resolveText(text: string): Promise<string> {
    const ids = mentionedUserIds(text);
    if (ids.length === 0) return text;
    const names = new Map<string, string>();
    for (const id of ids) {
      const name = await this.get(id);
      if (name) names.set(id, name);
    }
    return replaceMentions(text, names);
  }
}

/** A conversation that starts inside a thread someone else opened (not on its root, not in a DM's main). */
function startsInsideThread(message: InboundMessage): boolean {
  const { thread } = message.address;
  return thread !== mainThread && thread !== message.messageId;
}

export interface PrepareDependencies {
  api: SlackApi;
  names: UserNames;
  identity: () => BotIdentity | undefined;
  logger: Logger;
}

/** Thread messages that are someone writing (the rest are joins, topic changes and the like). */
const contextSubtypes = new Set(['thread_broadcast', 'bot_message', 'file_share']);

async function fetchThread(
  dependencies: PrepareDependencies,
  message: InboundMessage,
): Promise<SlackThreadMessage[]> {
  const collected: SlackThreadMessage[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < threadContextPages; page++) {
    const result = await dependencies.api.threadReplies({
      channel: message.address.channel,
      ts: message.address.thread,
      latest: message.messageId,
      ...(cursor ? { cursor } : {}),
    });
    collected.push(...result.messages);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  const earlier = collected.filter((entry) => Number(entry.ts) < Number(message.messageId));
  return earlier.filter((entry) => !entry.subtype || contextSubtypes.has(entry.subtype));
}

async function threadContext(
  dependencies: PrepareDependencies,
  message: InboundMessage,
): Promise<ThreadContextMessage[]> {
  const identity = dependencies.identity();
  const recent = (await fetchThread(dependencies, message)).slice(-threadContextSize);
  const context: ThreadContextMessage[] = [];
  for (const entry of recent) {
    const fromButler =
      (entry.botId !== undefined && entry.botId === identity?.botId) ||
      (entry.user !== undefined && entry.user === identity?.userId);
    const author = fromButler
      ? 'Butler'
      : entry.user
        ? ((await dependencies.names.get(entry.user)) ?? entry.user)
        : 'a bot';
    const content = messageContent(entry, identity?.userId, { allFiles: fromButler });
    const text = graphemePrefix(await dependencies.names.resolveText(content), contextMessageChars);
    // Butler's own files are not fetched back: the core stored them when it sent them.
    const files = fromButler ? [] : sharedFiles(entry.files);
    context.push({ user: author, text, fromButler, ...(files.length > 0 ? { files } : {}) });
  }
  return context;
}

/**
 * Off the acknowledgement path: mentions → names, the sender's name and time zone (what "at 9:00" means to
 * them), and for a conversation that starts inside an existing thread, that thread's recent messages. A failed
 * thread fetch only loses context.
 */
export async function prepareMessage(
  dependencies: PrepareDependencies,
  message: InboundMessage,
  options: { newConversation: boolean },
): Promise<PreparedMessage> {
  const { names } = dependencies;
  const text = await names.resolveText(message.text);
  // users.info knows people (and bot users), not a legacy integration's `B…` id: that sender keeps its name.
  const profile = message.user.id.startsWith('B')
    ? { name: undefined, timezone: undefined }
    : await names.profile(message.user.id);
  const name = message.user.name ?? profile.name;
  const prepared: InboundMessage = {
    ...message,
    text,
    user: {
      ...message.user,
      ...(name ? { name } : {}),
      ...(profile.timezone ? { timezone: profile.timezone } : {}),
    },
  };
  if (!options.newConversation || !startsInsideThread(message)) return { message: prepared };
  try {
    return { message: prepared, threadContext: await threadContext(dependencies, message) };
  } catch (error) {
    dependencies.logger.warn(
      {
        platform: 'slack',
        channel: message.address.channel,
        eventId: message.eventId,
        ...errorFields(error),
      },
      'could not read the thread for context',
    );
    return { message: prepared };
  }
}
