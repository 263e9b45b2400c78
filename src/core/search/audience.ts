import type { Audience, MessageSearch, SearchHit } from '../contracts/message-search.js';

/**
 * Which results may be shown where Butler answers, decided by Butler whatever the platform was asked for:
 * - in the asker's own direct chat with Butler, everything the asker may read;
 * - in a public channel, results from public channels only;
 * - in a private channel or group DM, results from that conversation and from public channels;
 * - anywhere else (a shared channel with other organizations, a conversation Butler cannot look up), only
 *   results from that same conversation.
 * A result whose conversation Butler cannot look up counts as private.
 */

export interface Where {
  workspace: string;
  conversationId: string;
  /** Butler answers in the asker's own direct chat. */
  askersDirectChat: boolean;
}

export function mayShow(here: Audience | undefined, where: Where, hit: SearchHit, of: Audience | undefined) {
  if (where.askersDirectChat) return true;
  if (hit.conversationId === where.conversationId) return true;
  return (here === 'public' || here === 'private') && of === 'public';
}

/** The results that may be shown here, and how many were withheld. */
export async function filterHits(
  search: MessageSearch,
  where: Where,
  hits: readonly SearchHit[],
): Promise<{ shown: SearchHit[]; withheld: number }> {
  if (where.askersDirectChat) return { shown: [...hits], withheld: 0 };
  // Each conversation is looked up once, all at once (the person waits for the answer).
  const ids = [...new Set([where.conversationId, ...hits.map((hit) => hit.conversationId)])];
  const found = await Promise.all(ids.map((id) => search.audienceOf(where.workspace, id)));
  const audiences = new Map(ids.map((id, index) => [id, found[index]]));
  const here = audiences.get(where.conversationId);
  const shown = hits.filter((hit) => mayShow(here, where, hit, audiences.get(hit.conversationId)));
  return { shown, withheld: hits.length - shown.length };
}
