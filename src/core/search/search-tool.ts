import { z } from 'zod';
import type { ConnectionBook } from '../connections/connection-book.js';
import { ConnectionNeededError } from '../contracts/connection-needed.js';
import { onPlatform, type Platform } from '../contracts/events.js';
import type { SearchAnswer, SearchCredential, SearchRequest } from '../contracts/message-search.js';
import type { People } from '../contracts/people.js';
import { defineTool } from '../tools/define-tool.js';
import type { Tool, ToolContext, ToolOutput } from '../tools/tool.js';
import { filterHits } from './audience.js';
import { SearchLimiter } from './limiter.js';
import { keptText, resultsText } from './search-text.js';

/**
 * `search_messages`: the team's own messages, searched as the one person who asked may read them (with their
 * own credential, never anyone else's), shown only where everyone who sees the reply could read them
 * (`audience.ts`), and not kept: the history holds what was searched and the links, never the messages.
 */

/** The person connection that holds a Feishu user's own token for searching. */
export const feishuSearchConnection = 'feishu';

export interface SearchToolOptions {
  people: People;
  /** Searches a person may make a minute. */
  perMinute: number;
  /** The platforms whose adapters can search (Slack with a secret key; Feishu with its connection). */
  platforms: readonly Platform[];
  /** Slack: whether private conversations may be searched (results are filtered here either way). */
  slackPrivate: boolean;
  /** The connections holding Feishu users' tokens; absent: Feishu is not searched. */
  connections?: ConnectionBook;
  now?: () => number;
}

const dateText = z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), 'an ISO date such as 2026-03-01')
  .transform((text) => new Date(text));

const schema = z.object({
  query: z.string().trim().min(1).max(500).describe('Words to look for'),
  channels: z
    .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a conversation id'))
    .max(20)
    .optional()
    .describe('Conversation ids to search in; leave out to search everywhere the person may read'),
  after: dateText.optional().describe('Only messages sent after this ISO date'),
  before: dateText.optional().describe('Only messages sent before this ISO date'),
  limit: z.number().int().min(1).max(20).default(10).describe('How many results, at most 20'),
});

type Input = z.output<typeof schema>;

export function createSearchTool(options: SearchToolOptions): Tool {
  const limiter = new SearchLimiter(options.perMinute, options.now);
  const tool = defineTool({
    name: 'search_messages',
    description:
      "Search the team's own messages (channels, group chats, direct messages) as the person asking may read them. Use it for what was said or decided earlier. Cite each message you use with its link.",
    risk: 'low',
    schema,
    summarize: (input) => `search messages for "${input.query}"`,
    execute: (input, context) => search(options, limiter, input, context),
  });
  return { ...tool, platforms: options.platforms };
}

async function search(
  options: SearchToolOptions,
  limiter: SearchLimiter,
  input: Input,
  context: ToolContext,
): Promise<ToolOutput> {
  const [asker, ...others] = context.requesters;
  if (!asker || others.length > 0)
    throw new Error(
      'search acts as the person who asks, and several people asked in this turn: one of them asks again in a message of their own',
    );
  const { messageSearch } = context;
  if (!messageSearch) throw new Error('messages cannot be searched in this conversation');
  if (!limiter.admit(options.people.keyOf(onPlatform(asker, context.address.platform))))
    throw new Error(
      `${options.perMinute} searches a minute is the limit for one person; wait a moment before searching again`,
    );
  const platform = context.address.platform;
  const request: SearchRequest = {
    query: input.query,
    limit: input.limit,
    includePrivate: platform !== 'slack' || options.slackPrivate,
    ...(input.channels ? { channels: input.channels } : {}),
    ...(input.after ? { after: input.after } : {}),
    ...(input.before ? { before: input.before } : {}),
  };
  const run = (credential: SearchCredential) =>
    messageSearch.search(context.address.workspace, request, credential, context.signal);
  const answer =
    platform === 'feishu' ? await asFeishuUser(options, context, run) : await withGrant(context, run);
  if (typeof answer === 'string') return answer;
  if (!answer.ok) throw new Error(answer.detail);
  const { shown, withheld } = await filterHits(
    messageSearch,
    {
      workspace: context.address.workspace,
      conversationId: context.address.channel,
      askersDirectChat: context.isDirect,
    },
    answer.hits,
  );
  return { text: resultsText(input.query, shown, withheld), kept: keptText(input.query, shown, withheld) };
}

const askAgain =
  'Searching needs the permission Slack gives with your own new message to Butler, and this turn has none (it expired, it went on after a wait, or Slack sent none). Ask again in a new message.';

/** Slack: the action token of the asker's own message, or nothing (never another token). */
async function withGrant(
  context: ToolContext,
  run: (credential: SearchCredential) => Promise<SearchAnswer>,
): Promise<SearchAnswer | string> {
  if (!context.grant) return askAgain;
  const answer = await run({ kind: 'action_token', token: context.grant });
  if (!answer.ok && answer.refusal === 'credential') return askAgain;
  return answer;
}

/**
 * Feishu: the asker's own user token from their connection; without one the call waits while they connect.
 * A token Feishu refuses is refreshed once (here or in another process) and the search tried again.
 */
async function asFeishuUser(
  options: SearchToolOptions,
  context: ToolContext,
  run: (credential: SearchCredential) => Promise<SearchAnswer>,
): Promise<SearchAnswer> {
  const { connections } = options;
  if (!connections) throw new Error('Feishu search is not set up on this Butler');
  const asker = onPlatform(context.requester, context.address.platform);
  const owner = () => connections.ownerFor(feishuSearchConnection, asker);
  for (let attempt = 0; ; attempt++) {
    const token = await connections.token(feishuSearchConnection, asker);
    if (!token) throw new ConnectionNeededError(feishuSearchConnection, owner());
    const answer = await run({ kind: 'user_token', token: token.token });
    if (answer.ok || answer.refusal === 'failed') return answer;
    if (answer.refusal === 'scope')
      throw new ConnectionNeededError(
        feishuSearchConnection,
        owner(),
        connections.scopeOf(feishuSearchConnection),
      );
    if (attempt > 0 || !(await connections.rejected(feishuSearchConnection, asker, token.version)))
      throw new ConnectionNeededError(feishuSearchConnection, owner());
  }
}
