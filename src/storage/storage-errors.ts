import { DrizzleQueryError } from 'drizzle-orm/errors';
import { StorageError } from '../core/contracts/errors.js';
import { truncateText } from '../core/text/index.js';

/**
 * Database failures as Butler reports them. drizzle's query error carries the SQL and every parameter
 * (message text, tool arguments) in its message and fields, and a log line of it would copy a
 * 40,000-character message whole; so repositories rethrow it as a StorageError that names the operation
 * and the database's error code only.
 */

/** Driver codes of a database that cannot be reached (postgres.js names its own; the rest are errno codes). */
const connectionCodes = /^(E[A-Z]+|CONNECTION_[A-Z_]+|CONNECT_TIMEOUT|MAX_PARAMETERS_EXCEEDED)$/;
const sqlStatePattern = /^[0-9A-Z]{5}$/;
/** Quoted identifiers (encodings, constraint and relation names) stay; quoted values do not. */
const identifierPattern = /^[A-Za-z_][A-Za-z0-9_.$]*$/;
const longestReason = 300;

function fieldOf(error: unknown, key: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[key] : undefined;
}

function databaseCode(error: unknown): string | undefined {
  const code = fieldOf(error, 'code');
  if (typeof code !== 'string') return undefined;
  return sqlStatePattern.test(code) || connectionCodes.test(code) ? code : undefined;
}

function isDriverError(error: unknown): boolean {
  const name = fieldOf(error, 'name');
  return name === 'PostgresError' || name === 'DatabaseError' || databaseCode(error) !== undefined;
}

/** The database's own message, with quoted values (e.g. `invalid input syntax for type uuid: "…"`) removed. */
function safeReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n', 1)[0] ?? '';
  const redacted = firstLine.replace(/"([^"]*)"/g, (quoted, inner: string) =>
    identifierPattern.test(inner) ? quoted : '"…"',
  );
  return truncateText(redacted, longestReason + 1);
}

/**
 * `error` as a StorageError when it came from the database (or the driver), else unchanged: an error that
 * a transaction's own work threw (a StorageError of a nested statement, a bug) passes through as it is.
 */
export function toStorageError(operation: string, error: unknown): unknown {
  if (error instanceof StorageError) return error;
  const cause = error instanceof DrizzleQueryError ? (error.cause ?? error) : error;
  if (!(error instanceof DrizzleQueryError) && !isDriverError(cause)) return error;
  return new StorageError(operation, databaseCode(cause), safeReason(cause));
}

/** The repository with every method's database errors turned into StorageErrors named `area method`. */
export function guardRepository<Repository extends object>(area: string, repository: Repository): Repository {
  const guarded: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(repository)) {
    if (typeof member !== 'function') {
      guarded[name] = member;
      continue;
    }
    const method = member as (...parameters: unknown[]) => Promise<unknown>;
    guarded[name] = async (...parameters: unknown[]) => {
      try {
        return await method(...parameters);
      } catch (error) {
        throw toStorageError(`${area} ${name}`, error);
      }
    };
  }
  return guarded as Repository;
}
