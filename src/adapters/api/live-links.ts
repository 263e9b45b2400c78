import type {
  ConversationEventRepository,
  StoredConversationEvent,
} from '../../core/contracts/conversation-events.js';

/**
 * The event log as streams read it: a `private_link` event is stored without its URL, and shows it here while the
 * link can still be used (`liveLink` derives it again from the link's id; used or expired, it has none).
 */
export function withLiveLinks(
  events: ConversationEventRepository,
  liveLink: (id: string) => Promise<string | undefined>,
): ConversationEventRepository {
  const reveal = async (stored: StoredConversationEvent): Promise<StoredConversationEvent> => {
    const { event } = stored;
    if (event.type !== 'private_link') return stored;
    const url = await liveLink(event.linkId);
    return url ? { ...stored, event: { ...event, url } } : stored;
  };
  return {
    append: (conversationKey, appended) => events.append(conversationKey, appended),
    lastId: (conversationKey) => events.lastId(conversationKey),
    async listAfter(conversationKey, afterId, limit) {
      const page = await events.listAfter(conversationKey, afterId, limit);
      return page.some((stored) => stored.event.type === 'private_link')
        ? Promise.all(page.map(reveal))
        : page;
    },
  };
}
