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
  const audiences = new Map<string, Audience | undefined>();
  const audienceOf = async (conversationId: string) => {
    if (!audiences.has(conversationId))
      audiences.set(conversationId, await search.audienceOf(where.workspace, conversationId));
    return audiences.get(conversationId);
  };
  const here = await audienceOf(where.conversationId);
  const shown: SearchHit[] = [];
  for (const hit of hits)
    if (mayShow(here, where, hit, await audienceOf(hit.conversationId))) shown.push(hit);
  return { shown, withheld: hits.length - shown.length };
}
