import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/**
 * `column` (a conversation key) starts with one of `prefixes`, taken literally; undefined (no condition) when no
 * list is given, and false for an empty one: a reader limited to no tenant reads nothing.
 */
export function startsWithAny(column: PgColumn, prefixes: readonly string[] | undefined): SQL | undefined {
  if (prefixes === undefined) return undefined;
  return sql`(${sql.join([sql`false`, ...prefixes.map((prefix) => sql`starts_with(${column}, ${prefix})`)], sql` or `)})`;
}
