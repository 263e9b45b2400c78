import { readMigrationFiles } from 'drizzle-orm/migrator';
import type postgres from 'postgres';

/** Arbitrary but fixed: every Butler process migrating the same database contends on this key. */
const migrationLockKey = 7_461_001;

/**
 * Applies the migrations drizzle-kit generated (`drizzle/`), as drizzle's own migrator does (the same journal
 * table, `drizzle.__drizzle_migrations`, and the same rule: every migration newer than the last applied), but in
 * one transaction that first takes a transaction-scoped advisory lock. Drizzle's migrator takes no lock, and a
 * session lock around it does not hold behind a transaction pooler (PgBouncer, Supavisor, Neon): the lock, the
 * migration and the unlock may each run on another server connection. A transaction runs on one. Returns how
 * many migrations it applied.
 */
export async function applyMigrations(client: postgres.Sql, migrationsFolder: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  return client.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${migrationLockKey})`;
    await tx`create schema if not exists drizzle`;
    await tx`create table if not exists drizzle.__drizzle_migrations (
      id serial primary key, hash text not null, created_at bigint
    )`;
    const [last] = await tx<Array<{ created_at: string | null }>>`
      select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    const appliedUpTo =
      last?.created_at === undefined || last.created_at === null ? undefined : Number(last.created_at);
    let applied = 0;
    for (const migration of migrations) {
      if (appliedUpTo !== undefined && appliedUpTo >= migration.folderMillis) continue;
      for (const statement of migration.sql) await tx.unsafe(statement);
      await tx`insert into drizzle.__drizzle_migrations (hash, created_at)
        values (${migration.hash}, ${migration.folderMillis})`;
      applied += 1;
    }
    return applied;
  });
}
