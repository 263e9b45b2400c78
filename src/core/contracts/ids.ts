/**
 * Whether `id` has the shape of the UUIDs Butler's records are keyed by. An id that does not names no record,
 * and is checked before the database sees it (Postgres refuses to compare a malformed one with a uuid column).
 */
export function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}
