import type { Logger } from '../../core/contracts/logger.js';
import type {
  Audience,
  MessageSearch,
  SearchAnswer,
  SearchCredential,
  SearchHit,
  SearchRequest,
} from '../../core/contracts/message-search.js';
import { ExpiringMap } from '../expiring-map.js';
import { stringField } from './listed-messages.js';
import { timestampToIso } from './normalize.js';
import { isRecord } from './parse.js';
import type { SlackApi } from './slack-api.js';
import { SlackApiError } from './slack-api-error.js';

/**
 * Slack's real-time search for agent apps (`assistant.search.context`, docs.slack.dev/reference/methods/
 * assistant.search.context): the bot token authenticates the call and the asker's own `action_token` (from
 * the event of their message) says whose view of the workspace is searched, so Slack answers only what that
 * person may read. `conversations.info` says who can read a result's conversation, for the audience filter
 * (`core/search`): a conversation Butler cannot see (`channel_not_found`) is private to it. Both are calls a
 * person waits on: made only when their rate budget has room now, never queued.
 */

const everyKind = 'public_channel,private_channel,mpim,im';
/** What Slack answers for an action token it does not take (the method page lists no names). */
const credentialRefusals = new Set([
  'invalid_action_token',
  'expired_action_token',
  'missing_action_token',
  'action_token_expired',
  'token_expired',
]);

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export function createSlackMessageSearch(api: SlackApi, logger: Logger): MessageSearch {
  // Who can read a conversation changes rarely: a minute of staleness, 2,000 conversations per workspace.
  const audiences = new ExpiringMap<string, Audience | undefined>({ ttlMs: 60_000, maxEntries: 2000 });

  async function search(
    _workspace: string,
    request: SearchRequest,
    credential: SearchCredential,
  ): Promise<SearchAnswer> {
    if (credential.kind !== 'action_token')
      return { ok: false, refusal: 'credential', detail: 'Slack searches with an action token' };
    let result: Record<string, unknown>;
    try {
      result = await api.callNow('assistant.search.context', {
        query: request.query,
        action_token: credential.token,
        content_types: 'messages',
        channel_types: request.includePrivate ? everyKind : 'public_channel',
        limit: request.limit,
        ...(request.after ? { after: seconds(request.after) } : {}),
        ...(request.before ? { before: seconds(request.before) } : {}),
      });
    } catch (error) {
      return refusalOf(error);
    }
    const results = isRecord(result.results) ? result.results : {};
    const messages = Array.isArray(results.messages) ? results.messages.filter(isRecord) : [];
    const hits = messages.flatMap((message): SearchHit[] => {
      const conversationId = stringField(message, 'channel_id');
      const ts = stringField(message, 'message_ts');
      const permalink = stringField(message, 'permalink');
      if (!conversationId || !ts || !permalink) return [];
      const name = stringField(message, 'channel_name');
      return [
        {
          conversationId,
          ...(name ? { conversationName: `#${name}` } : {}),
          author: stringField(message, 'author_name') ?? stringField(message, 'author_user_id') ?? 'someone',
          sentAt: timestampToIso(ts),
          text: stringField(message, 'content') ?? '',
          permalink,
        },
      ];
    });
    // The method takes no conversation list: results outside the ones asked for are dropped.
    const wanted = request.channels ? new Set(request.channels) : undefined;
    return { ok: true, hits: wanted ? hits.filter((hit) => wanted.has(hit.conversationId)) : hits };
  }

  function refusalOf(error: unknown): SearchAnswer {
    const code = error instanceof SlackApiError ? error.slackError : 'request_failed';
    if (credentialRefusals.has(code))
      return { ok: false, refusal: 'credential', detail: `Slack refused the action token (${code})` };
    if (code === 'missing_scope' || code === 'not_allowed_token_type')
      return {
        ok: false,
        refusal: 'scope',
        detail: `Butler's Slack app may not search (${code}): an admin reinstalls it with the search:read scopes of slack/manifest.yaml`,
      };
    logger.warn({ platform: 'slack', err: error }, 'message search failed');
    if (code === 'paced' || code === 'ratelimited')
      return {
        ok: false,
        refusal: 'failed',
        detail: "Slack's search is busy right now; try again in a minute",
      };
    return { ok: false, refusal: 'failed', detail: `Slack's search failed (${code})` };
  }

  async function audienceOf(workspace: string, conversationId: string): Promise<Audience | undefined> {
    const key = `${workspace}:${conversationId}`;
    if (audiences.has(key)) return audiences.get(key);
    try {
      const result = await api.callNow('conversations.info', { channel: conversationId });
      const channel = isRecord(result.channel) ? result.channel : {};
      const audience = audienceOfChannel(channel);
      audiences.set(key, audience);
      return audience;
    } catch (error) {
      // Butler cannot see it: private to Butler, and remembered as such; anything else is not remembered.
      if (error instanceof SlackApiError && error.slackError === 'channel_not_found')
        audiences.set(key, undefined);
      return undefined;
    }
  }

  return { search, audienceOf };
}

/** A `conversations.info` channel's readers. */
function audienceOfChannel(channel: Record<string, unknown>): Audience {
  if (channel.is_ext_shared === true || channel.is_pending_ext_shared === true) return 'external';
  if (channel.is_im === true) return 'direct';
  if (channel.is_mpim === true || channel.is_private === true || channel.is_group === true) return 'private';
  return 'public';
}
