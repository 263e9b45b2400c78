import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Platform } from '../../core/contracts/events.js';
import type {
  InstallationRecord,
  InstallationRepository,
} from '../../core/contracts/installation-records.js';
import type { Database } from '../database.js';
import { installations } from '../schema.js';

type Row = typeof installations.$inferSelect;

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
    token: row.sealedToken && row.keyId ? { keyId: row.keyId, value: row.sealedToken } : undefined,
    installedAt: row.installedAt,
    uninstalledAt: row.uninstalledAt ?? undefined,
    lastError: row.lastError ?? undefined,
  };
}

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
        keyId: installation.token.keyId,
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
        .set({ sealedToken: null, keyId: null, uninstalledAt: new Date(), updatedAt: new Date() })
        .where(and(byKey(platform, key), isNull(installations.uninstalledAt)))
        .returning({ key: installations.key });
      return changed.length > 0;
    },

    async noteError(platform, key, error) {
      await db
        .update(installations)
        .set({ lastError: error, updatedAt: new Date() })
        .where(byKey(platform, key));
    },
  };
}
