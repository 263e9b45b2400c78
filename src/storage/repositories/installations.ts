import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Platform } from '../../core/contracts/events.js';
import type {
  InstallationRecord,
  InstallationRepository,
  SealedSecret,
} from '../../core/contracts/installation-records.js';
import type { Database } from '../database.js';
import { installations } from '../schema.js';

type Row = typeof installations.$inferSelect;

/** A sealed column and the key id beside it, or undefined where either is missing. */
const sealed = (value: string | null, keyId: string | null): SealedSecret | undefined =>
  value && keyId ? { keyId, value } : undefined;

function toRecord(row: Row): InstallationRecord {
  return {
    platform: row.platform,
    key: row.key,
    teamId: row.teamId ?? undefined,
    enterpriseId: row.enterpriseId ?? undefined,
    isEnterpriseInstall: row.isEnterpriseInstall,
    botUserId: row.botUserId,
    botId: row.botId,
    scopes: row.scopes,
    installerId: row.installerId ?? undefined,
    token: sealed(row.sealedToken, row.keyId),
    refreshToken: sealed(row.sealedRefreshToken, row.keyId),
    tokenExpiresAt: row.tokenExpiresAt ?? undefined,
    refreshingUntil: row.refreshingUntil ?? undefined,
    installedAt: row.installedAt,
    uninstalledAt: row.uninstalledAt ?? undefined,
    lastError: row.lastError ?? undefined,
  };
}

/** Installations over OAuth as rows of `installations`; tokens arrive sealed and leave sealed. */
export function installationRepository(db: Database): InstallationRepository {
  const byKey = (platform: Platform, key: string) =>
    and(eq(installations.platform, platform), eq(installations.key, key));
  return {
    async save(installation) {
      const values = {
        platform: installation.platform,
        key: installation.key,
        teamId: installation.teamId ?? null,
        enterpriseId: installation.enterpriseId ?? null,
        isEnterpriseInstall: installation.isEnterpriseInstall,
        botUserId: installation.botUserId,
        botId: installation.botId,
        scopes: installation.scopes,
        installerId: installation.installerId ?? null,
        sealedToken: installation.token.value,
        sealedRefreshToken: installation.refreshToken?.value ?? null,
        keyId: installation.token.keyId,
        tokenExpiresAt: installation.tokenExpiresAt ?? null,
        refreshingUntil: null,
        uninstalledAt: null,
        lastError: null,
        installedAt: new Date(),
        updatedAt: new Date(),
      };
      const { platform: _platform, key: _key, ...update } = values;
      await db
        .insert(installations)
        .values(values)
        .onConflictDoUpdate({ target: [installations.platform, installations.key], set: update });
    },

    async get(platform, key) {
      const [row] = await db.select().from(installations).where(byKey(platform, key));
      return row && toRecord(row);
    },

    async list(platform) {
      const rows = await db
        .select()
        .from(installations)
        .where(eq(installations.platform, platform))
        .orderBy(asc(installations.installedAt));
      return rows.map(toRecord);
    },

    async deactivate(platform, key) {
      const changed = await db
        .update(installations)
        .set({
          sealedToken: null,
          sealedRefreshToken: null,
          keyId: null,
          tokenExpiresAt: null,
          refreshingUntil: null,
          uninstalledAt: new Date(),
          updatedAt: new Date(),
        })
        .where(and(byKey(platform, key), isNull(installations.uninstalledAt)))
        .returning({ key: installations.key });
      return changed.length > 0;
    },

    async noteError(platform, key, error, sealedToken) {
      await db
        .update(installations)
        .set({ lastError: error, updatedAt: new Date() })
        .where(and(byKey(platform, key), eq(installations.sealedToken, sealedToken)));
    },

    async claimRefresh(platform, key, leaseMs) {
      const [row] = await db
        .update(installations)
        .set({ refreshingUntil: sql`now() + ${leaseMs} * interval '1 millisecond'` })
        .where(
          and(
            byKey(platform, key),
            isNull(installations.uninstalledAt),
            or(isNull(installations.refreshingUntil), lt(installations.refreshingUntil, sql`now()`)),
          ),
        )
        .returning();
      return row && toRecord(row);
    },

    async saveRotated(platform, key, rotated) {
      await db
        .update(installations)
        .set({
          sealedToken: rotated.token.value,
          sealedRefreshToken: rotated.refreshToken.value,
          keyId: rotated.token.keyId,
          tokenExpiresAt: rotated.tokenExpiresAt,
          refreshingUntil: null,
          updatedAt: new Date(),
        })
        .where(and(byKey(platform, key), isNull(installations.uninstalledAt)));
    },

    async releaseRefresh(platform, key, claimedUntil, afterMs) {
      await db
        .update(installations)
        .set({ refreshingUntil: afterMs > 0 ? sql`now() + ${afterMs} * interval '1 millisecond'` : null })
        // The lease as this caller read it back (to the millisecond: a Date has no microseconds).
        .where(
          and(
            byKey(platform, key),
            sql`date_trunc('milliseconds', ${installations.refreshingUntil}) = ${claimedUntil.toISOString()}::timestamptz`,
          ),
        );
    },
  };
}
