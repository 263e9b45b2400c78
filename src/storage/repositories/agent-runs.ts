import { and, desc, eq, gte, sql } from 'drizzle-orm';
import type { AgentRunRepository, RoutingRepository } from '../../core/contracts/store.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { agentRuns, routingDecisions } from '../schema.js';

/** Sub-agent runs (per-agent usage) and routing decisions: write-mostly records of what a turn did. */

export function agentRunRepository(db: Database): AgentRunRepository {
  return {
    async record(run) {
      await db.insert(agentRuns).values({ ...cleanJson(run), durationMs: Math.round(run.durationMs) });
    },

    async usageByAgent(since, conversationKey) {
      const promptTokens = sql<number>`sum(${agentRuns.promptTokens})::int`;
      const rows = await db
        .select({
          agent: agentRuns.agent,
          runs: sql<number>`count(*)::int`,
          promptTokens,
          completionTokens: sql<number>`sum(${agentRuns.completionTokens})::int`,
        })
        .from(agentRuns)
        .where(
          and(
            gte(agentRuns.createdAt, since),
            conversationKey ? eq(agentRuns.conversationKey, conversationKey) : undefined,
          ),
        )
        .groupBy(agentRuns.agent)
        .orderBy(desc(promptTokens));
      return rows;
    },
  };
}

export function routingRepository(db: Database): RoutingRepository {
  return {
    async record(decision) {
      await db
        .insert(routingDecisions)
        .values({ ...cleanJson(decision), durationMs: Math.round(decision.durationMs) });
    },

    async list(conversationKey) {
      const rows = await db
        .select()
        .from(routingDecisions)
        .where(eq(routingDecisions.conversationKey, conversationKey))
        .orderBy(routingDecisions.id);
      return rows.map(({ id: _id, ...row }) => row);
    },
  };
}
