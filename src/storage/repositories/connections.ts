import { and, desc, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type {
  ConnectFlowRecord,
  ConnectionRecord,
  ConnectionRepository,
  ConnectionWaitRecord,
} from '../../core/contracts/connection-records.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { connectionWaits, oauthConnections, oauthFlows, oauthServers } from '../schema.js';

/** Connections, Connect links and parked waits (`core/contracts/connection-records.ts`). */

type ConnectionRow = typeof oauthConnections.$inferSelect;
type FlowRow = typeof oauthFlows.$inferSelect;

const toConnection = (row: ConnectionRow): ConnectionRecord => ({
  server: row.server,
  ownerKey: row.ownerKey,
  owner: row.owner,
  tokens: { keyId: row.keyId, value: row.sealed },
  expiresAt: row.expiresAt,
  scope: row.scope,
  version: row.version,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const toFlow = (row: FlowRow): ConnectFlowRecord => ({
  id: row.id,
  server: row.server,
  ownerKey: row.ownerKey,
  owner: row.owner,
  linkHash: row.linkHash,
  expiresAt: row.expiresAt,
  scope: row.scope,
  verifier:
    row.sealedVerifier && row.verifierKeyId ? { keyId: row.verifierKeyId, value: row.sealedVerifier } : null,
  browserHash: row.browserHash,
  openedAt: row.openedAt,
  completedAt: row.completedAt,
});

const toWait = (row: typeof connectionWaits.$inferSelect): ConnectionWaitRecord => ({
  id: row.id,
  server: row.server,
  ownerKey: row.ownerKey,
  owner: row.owner,
  conversationKey: row.conversationKey,
  platform: row.platform,
  requestedBy: row.requestedBy,
  requesters: row.requesters,
  callIds: row.callIds,
  resume: row.resume,
  expiresAt: row.expiresAt,
  status: row.status,
  createdAt: row.createdAt,
});

const connectionOf = (server: string, ownerKey: string) =>
  and(eq(oauthConnections.server, server), eq(oauthConnections.ownerKey, ownerKey));

export function connectionRepository(db: Database): ConnectionRepository {
  return {
    async get(server, ownerKey) {
      const [row] = await db.select().from(oauthConnections).where(connectionOf(server, ownerKey));
      return row && toConnection(row);
    },

    async list(ownerKeys) {
      const rows = await db
        .select()
        .from(oauthConnections)
        .where(ownerKeys ? inArray(oauthConnections.ownerKey, [...ownerKeys]) : undefined)
        .orderBy(desc(oauthConnections.updatedAt));
      return rows.map(toConnection);
    },

    async save(input) {
      const values = {
        server: input.server,
        ownerKey: input.ownerKey,
        owner: cleanJson(input.owner),
        sealed: input.tokens.value,
        keyId: input.tokens.keyId,
        expiresAt: input.expiresAt,
        scope: input.scope,
      };
      const [row] = await db
        .insert(oauthConnections)
        .values(values)
        .onConflictDoUpdate({
          target: [oauthConnections.server, oauthConnections.ownerKey],
          set: {
            ...values,
            version: sql`${oauthConnections.version} + 1`,
            refreshingUntil: null,
            updatedAt: new Date(),
          },
        })
        .returning();
      if (!row) throw new Error('connection upsert returned nothing');
      return toConnection(row);
    },

    async delete(server, ownerKey) {
      const rows = await db
        .delete(oauthConnections)
        .where(connectionOf(server, ownerKey))
        .returning({ server: oauthConnections.server });
      return rows.length > 0;
    },

    async takeRefreshLease(server, ownerKey, until) {
      const rows = await db
        .update(oauthConnections)
        .set({ refreshingUntil: until })
        .where(
          and(
            connectionOf(server, ownerKey),
            or(isNull(oauthConnections.refreshingUntil), lte(oauthConnections.refreshingUntil, new Date())),
          ),
        )
        .returning({ server: oauthConnections.server });
      return rows.length > 0;
    },

    async releaseRefreshLease(server, ownerKey) {
      await db.update(oauthConnections).set({ refreshingUntil: null }).where(connectionOf(server, ownerKey));
    },

    async serverState(server) {
      const [row] = await db.select().from(oauthServers).where(eq(oauthServers.server, server));
      if (!row) return undefined;
      return {
        client:
          row.sealedClient && row.clientKeyId ? { keyId: row.clientKeyId, value: row.sealedClient } : null,
        discovery: row.discovery,
      };
    },

    async saveClient(server, client) {
      const set = {
        sealedClient: client?.value ?? null,
        clientKeyId: client?.keyId ?? null,
        updatedAt: new Date(),
      };
      await db
        .insert(oauthServers)
        .values({ server, ...set })
        .onConflictDoUpdate({ target: oauthServers.server, set });
    },

    async saveDiscovery(server, discovery) {
      const set = { discovery: discovery === undefined ? null : cleanJson(discovery), updatedAt: new Date() };
      await db
        .insert(oauthServers)
        .values({ server, ...set })
        .onConflictDoUpdate({ target: oauthServers.server, set });
    },

    async toolList(server) {
      const [row] = await db
        .select({ tools: oauthServers.tools })
        .from(oauthServers)
        .where(eq(oauthServers.server, server));
      return row?.tools ?? undefined;
    },

    async saveToolList(server, tools) {
      const set = { tools: cleanJson(tools), toolsListedAt: new Date(), updatedAt: new Date() };
      await db
        .insert(oauthServers)
        .values({ server, ...set })
        .onConflictDoUpdate({ target: oauthServers.server, set });
    },

    async createFlow(flow) {
      const [row] = await db
        .insert(oauthFlows)
        .values({ ...flow, owner: cleanJson(flow.owner) })
        .returning();
      if (!row) throw new Error('flow insert returned nothing');
      return toFlow(row);
    },

    async findFlow(linkHash) {
      const [row] = await db.select().from(oauthFlows).where(eq(oauthFlows.linkHash, linkHash));
      return row && toFlow(row);
    },

    async findFlowById(id) {
      const [row] = await db.select().from(oauthFlows).where(eq(oauthFlows.id, id));
      return row && toFlow(row);
    },

    async openFlow(linkHash, now, browserHash) {
      const [row] = await db
        .update(oauthFlows)
        .set({ openedAt: now, browserHash })
        .where(
          and(eq(oauthFlows.linkHash, linkHash), isNull(oauthFlows.openedAt), gt(oauthFlows.expiresAt, now)),
        )
        .returning();
      return row && toFlow(row);
    },

    async startAuthorization(id, { stateHash, verifier, scope }) {
      await db
        .update(oauthFlows)
        .set({ stateHash, sealedVerifier: verifier.value, verifierKeyId: verifier.keyId, scope })
        .where(eq(oauthFlows.id, id));
    },

    async completeFlow(stateHash, now) {
      const [row] = await db
        .update(oauthFlows)
        .set({ completedAt: now })
        .where(
          and(
            eq(oauthFlows.stateHash, stateHash),
            isNull(oauthFlows.completedAt),
            gt(oauthFlows.expiresAt, now),
          ),
        )
        .returning();
      return row && toFlow(row);
    },

    async createWait(wait) {
      const { expiresAt, ...rest } = wait;
      const [row] = await db
        .insert(connectionWaits)
        .values({ ...cleanJson(rest), expiresAt })
        .returning();
      if (!row) throw new Error('wait insert returned nothing');
      return toWait(row);
    },

    async getWait(id) {
      const [row] = await db.select().from(connectionWaits).where(eq(connectionWaits.id, id));
      return row && toWait(row);
    },

    async connectWaits(server, ownerKey) {
      const rows = await db
        .update(connectionWaits)
        .set({ status: 'connected', endedAt: new Date() })
        .where(
          and(
            eq(connectionWaits.server, server),
            eq(connectionWaits.ownerKey, ownerKey),
            eq(connectionWaits.status, 'waiting'),
          ),
        )
        .returning();
      return rows.map(toWait);
    },

    async expireWaits(now) {
      const rows = await db
        .update(connectionWaits)
        .set({ status: 'expired', endedAt: now })
        .where(and(eq(connectionWaits.status, 'waiting'), lte(connectionWaits.expiresAt, now)))
        .returning();
      return rows.map(toWait);
    },

    async openWaits(ownerKeys) {
      const rows = await db
        .select()
        .from(connectionWaits)
        .where(
          and(
            eq(connectionWaits.status, 'waiting'),
            ownerKeys ? inArray(connectionWaits.ownerKey, [...ownerKeys]) : undefined,
          ),
        )
        .orderBy(desc(connectionWaits.createdAt));
      return rows.map(toWait);
    },
  };
}
