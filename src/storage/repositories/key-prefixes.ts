import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** `column` (a conversation key) starts with `prefix`, taken literally (`like` would read `_` and `%`). */
export function startsWith(column: PgColumn, prefix: string): SQL {
  return sql`starts_with(${column}, ${prefix})`;
}

/**
 * `column` starts with one of `prefixes`; undefined (no condition) when no list is given, and false for an empty
 * one: a reader limited to no tenant reads nothing.
 */
export function startsWithAny(column: PgColumn, prefixes: readonly string[] | undefined): SQL | undefined {
  if (prefixes === undefined) return undefined;
  return sql`(${sql.join([sql`false`, ...prefixes.map((prefix) => startsWith(column, prefix))], sql` or `)})`;
}
