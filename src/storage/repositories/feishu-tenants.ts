import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type {
  FeishuSecretRepository,
  FeishuTenant,
  FeishuTenantRepository,
} from '../../core/contracts/feishu-tenants.js';
import type { Database } from '../database.js';
import { feishuSecrets, feishuTenants } from '../schema.js';

const toTenant = (row: typeof feishuTenants.$inferSelect): FeishuTenant => ({
  tenantKey: row.tenantKey,
  appId: row.appId,
  firstSeenAt: row.firstSeenAt,
  uninstalledAt: row.uninstalledAt ?? undefined,
});

/**
 * The claim as one statement: insert the tenant for the app, or take back a row whose app was uninstalled;
 * otherwise read who has it. The outer select sees the table as it was before the insert, so a row the claim
 * left alone is read there, and one it wrote comes from `claimed`.
 */
function claimQuery(db: Database, tenantKey: string, appId: string) {
  const claimed = db
    .$with('claimed', { appId: sql<string>`app_id`, inserted: sql<boolean>`inserted` })
    .as(sql`
      insert into ${feishuTenants} (tenant_key, app_id) values (${tenantKey}, ${appId})
      on conflict (tenant_key) do update set app_id = excluded.app_id, uninstalled_at = null, updated_at = now()
        where feishu_tenants.uninstalled_at is not null
      returning app_id, (xmax = 0) as inserted`);
  const one = db.$with('one', { one: sql`one` }).as(sql`select 1 as one`);
  return db
    .with(claimed, one)
    .select({
      claimedBy: sql<string | null>`(select app_id from claimed)`,
      inserted: sql<boolean | null>`(select inserted from claimed)`,
      heldBy: sql<string | null>`(select app_id from ${feishuTenants} where tenant_key = ${tenantKey})`,
    })
    .from(one);
}

/** Tenants as rows of `feishu_tenants`: the first app to claim one keeps it until it is uninstalled there. */
export function feishuTenantRepository(db: Database): FeishuTenantRepository {
  return {
    async claim(tenantKey, appId) {
      const [row] = await claimQuery(db, tenantKey, appId);
      if (row?.claimedBy) return { served: true, returned: row.inserted === false };
      return row?.heldBy === appId
        ? { served: true, returned: false }
        : { served: false, by: row?.heldBy ?? '' };
    },

    async get(tenantKey) {
      const [row] = await db.select().from(feishuTenants).where(eq(feishuTenants.tenantKey, tenantKey));
      return row && toTenant(row);
    },

    async list() {
      const rows = await db.select().from(feishuTenants).orderBy(asc(feishuTenants.firstSeenAt));
      return rows.map(toTenant);
    },

    async uninstall(tenantKey, appId) {
      const changed = await db
        .update(feishuTenants)
        .set({ uninstalledAt: new Date(), updatedAt: new Date() })
        .where(
          and(
            eq(feishuTenants.tenantKey, tenantKey),
            eq(feishuTenants.appId, appId),
            isNull(feishuTenants.uninstalledAt),
          ),
        )
        .returning({ tenantKey: feishuTenants.tenantKey });
      return changed.length > 0;
    },
  };
}

/** A store app's credentials as rows of `feishu_secrets`; values arrive sealed and leave sealed. */
export function feishuSecretRepository(db: Database): FeishuSecretRepository {
  const byName = (appId: string, name: string) =>
    and(eq(feishuSecrets.appId, appId), eq(feishuSecrets.name, name));
  return {
    async get(appId, name) {
      const [row] = await db.select().from(feishuSecrets).where(byName(appId, name));
      return (
        row && {
          sealed: { keyId: row.keyId, value: row.sealedValue },
          expiresAt: row.expiresAt ?? undefined,
        }
      );
    },

    async put(appId, name, sealed, expiresAt) {
      const values = {
        sealedValue: sealed.value,
        keyId: sealed.keyId,
        expiresAt: expiresAt ?? null,
        updatedAt: new Date(),
      };
      await db
        .insert(feishuSecrets)
        .values({ appId, name, ...values })
        .onConflictDoUpdate({ target: [feishuSecrets.appId, feishuSecrets.name], set: values });
    },

    async delete(appId, name) {
      await db.delete(feishuSecrets).where(byName(appId, name));
    },
  };
}
