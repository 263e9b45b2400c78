import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import type { TestButler } from './butler-app.js';

/** Every row of every table of a running Butler's database as text: `pg_dump` on Postgres, a query per table on PGlite. */
export async function dumpDatabase(target: TestButler): Promise<string> {
  if (target.databaseUrl) {
    const { stdout } = await promisify(execFile)('pg_dump', ['--data-only', target.databaseUrl], {
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout;
  }
  const { db } = target.butler.database;
  const rows = await db.execute(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const names =
    (rows as unknown as { rows?: Array<{ table_name: string }> }).rows ??
    (rows as unknown as Array<{ table_name: string }>);
  const parts: string[] = [];
  for (const { table_name: table } of names)
    parts.push(table, JSON.stringify(await db.execute(sql`select * from ${sql.identifier(table)}`)));
  return parts.join('\n');
}
