import { sql } from 'drizzle-orm';
import type { StoredMessage } from '../../core/contracts/messages.js';
import type { TurnCommit, TurnOpening, TurnRepository } from '../../core/contracts/store.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { approvals, conversations, inboundEvents, memories, messages, turnUsage } from '../schema.js';
import { ensureConversation, toConversation, toMessage } from './conversations.js';
import { preparedOnFirstUse } from './prepared.js';

/**
 * A turn's one read and one write. Every turn used to open with five statements (create or find the
 * conversation, its window, its pending approvals, the requester's memories) and close with six (a
 * transaction around four writes); each statement is a round trip, a wake-up of a Postgres backend and
 * a socket write on both sides, which made them most of Butler's database cost per turn.
 */

type WindowRow = Parameters<typeof toMessage>[0];
type MemoryRow = { id: string; content: string; createdAt: string };

/** The conversation (created on first sight) with everything its turn reads, as one prepared statement. */
function openQuery(db: Database) {
  const opened = db.$with('opened').as(ensureConversation(db));
  // Subqueries return JSON arrays; the statement's snapshot is the insert's, as for separate reads. Columns
  // are written qualified by hand: drizzle leaves a single table's columns unqualified.
  const window = sql<WindowRow[]>`(
    select coalesce(json_agg(json_build_object(
      'id', m.id, 'role', m.role, 'content', m.content, 'author', m.author, 'toolCalls', m.tool_calls,
      'toolCallId', m.tool_call_id, 'platformMessageIds', m.platform_message_ids, 'files', m.files,
      'tokens', m.tokens
    ) order by m.id), '[]'::json)
    from ${messages} as m where m.conversation_id = opened.id and not m.compacted)`;
  const pending = sql<TurnOpening['pendingApprovals']>`(
    select coalesce(json_agg(json_build_object(
      'toolName', a.tool_name, 'summary', a.summary, 'requestedBy', a.requested_by
    ) order by a.created_at), '[]'::json)
    from ${approvals} as a where a.conversation_key = opened.key and a.status = 'pending')`;
  const top = sql<MemoryRow[]>`(
    select coalesce(json_agg(json_build_object(
      'id', top.id, 'content', top.content, 'createdAt', top.created_at
    ) order by top.last_used_at desc), '[]'::json)
    from (
      select id, content, created_at, last_used_at from ${memories}
      where owner_key = any(${sql.placeholder('memoryKeys')}::text[])
      order by last_used_at desc
      limit ${sql.placeholder('memoriesLimit')}
    ) as top)`;
  return db
    .with(opened)
    .select({
      id: opened.id,
      key: opened.key,
      platform: opened.platform,
      workspace: opened.workspace,
      channel: opened.channel,
      thread: opened.thread,
      summary: opened.summary,
      summaryTokens: opened.summaryTokens,
      lastCompactedAt: opened.lastCompactedAt,
      tokenScale: opened.tokenScale,
      promptTokensTotal: opened.promptTokensTotal,
      completionTokensTotal: opened.completionTokensTotal,
      compactionRetryAt: opened.compactionRetryAt,
      inflight: opened.inflight,
      window,
      pending,
      memories: top,
    })
    .from(opened);
}

/**
 * The turn's writes as data-modifying CTEs of one prepared statement: atomic without a transaction, one
 * round trip. Its one parameter is the commit as JSON; messages keep their order (`with ordinality`),
 * since the window is read back by id, and carry the turn's id (what a rating of the reply names). The
 * updates read the commit through scalar subqueries, which Postgres evaluates once and then looks rows up
 * by key (joining `turn` instead made it scan the inbox).
 */
function commitQuery(db: Database) {
  const written = { written: sql<number>`written` };
  const turn = db.$with('turn', { t: sql`t` }).as(sql`select ${sql.placeholder('commit')}::jsonb as t`);
  const appended = db.$with('appended', written).as(sql`
    insert into ${messages} (conversation_id, role, content, author, tool_calls, tool_call_id,
      platform_message_ids, files, tokens, turn_id)
    select (turn.t->>'conversationId')::uuid, m->>'role', m->>'content', m->>'author', m->'toolCalls',
      m->>'toolCallId', m->'platformMessageIds', m->'files', (m->>'tokens')::int, turn.t->'usage'->>'turnId'
    from turn, jsonb_array_elements(turn.t->'messages') with ordinality as listed(m, position)
    order by position
    returning 1 as written`);
  const closed = db.$with('closed', written).as(sql`
    update ${conversations} set
      inflight = null,
      prompt_tokens_total = prompt_tokens_total + (select (t->>'promptTokens')::bigint from turn),
      completion_tokens_total = completion_tokens_total + (select (t->>'completionTokens')::bigint from turn),
      token_scale = (select (t->>'tokenScale')::real from turn),
      updated_at = now()
    where id = (select (t->>'conversationId')::uuid from turn)
    returning 1 as written`);
  const finished = db.$with('finished', written).as(sql`
    update ${inboundEvents} set
      status = (select t->>'outcome' from turn),
      error = (select t->>'error' from turn),
      finished_at = now()
    where id = any (array(select jsonb_array_elements_text(t->'eventIds')::bigint from turn))
    returning 1 as written`);
  const recorded = db.$with('recorded', written).as(sql`
    insert into ${turnUsage} (turn_id, conversation_key, platform, workspace, channel, user_id, user_platform,
      model, compaction_model, prompt_tokens, completion_tokens, compaction_tokens, cost_usd)
    select u->>'turnId', u->>'conversationKey', u->>'platform', u->>'workspace', u->>'channel',
      u->>'userId', u->>'userPlatform', u->>'model', u->>'compactionModel', (u->>'promptTokens')::int,
      (u->>'completionTokens')::int, (u->>'compactionTokens')::int, (u->>'costUsd')::double precision
    from turn, jsonb_extract_path(turn.t, 'usage') as u
    returning 1 as written`);
  // Every data-modifying CTE runs to completion whether or not the final select reads it.
  return db
    .with(turn, appended, closed, finished, recorded)
    .select({ usageRows: sql<number>`(select count(*) from recorded)`.mapWith(Number) })
    .from(turn);
}

export function turnRepository(db: Database): TurnRepository {
  const openStatement = preparedOnFirstUse(() => openQuery(db).prepare('butler_turn_open'));
  const commitStatement = preparedOnFirstUse(() => commitQuery(db).prepare('butler_turn_commit'));

  return {
    async open({ conversationKey, address, memoriesOf, memoriesLimit }) {
      const [row] = await openStatement().execute({
        key: conversationKey,
        ...address,
        memoryKeys: [...memoriesOf.keys],
        memoriesLimit,
      });
      if (!row) throw new Error(`Could not open conversation ${conversationKey}`);
      const { window, pending, memories: top, ...conversation } = row;
      return {
        conversation: toConversation(conversation),
        window: window.map(toMessage) satisfies StoredMessage[],
        pendingApprovals: pending,
        memories: top.map((memory) => ({ ...memory, createdAt: new Date(memory.createdAt) })),
      };
    },

    async commit(commit: TurnCommit) {
      const { usage, ...rest } = commit;
      const { at: _at, ...usageRow } = usage;
      await commitStatement().execute({ commit: JSON.stringify(cleanJson({ ...rest, usage: usageRow })) });
    },
  };
}
