/**
 * An error as one line, with its cause when the message alone says little: Node's fetch reports every
 * network failure as "fetch failed" and keeps the reason (`connect ECONNREFUSED …`) in `cause`.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}
