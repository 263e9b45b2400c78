import type { ConnectionOwner } from './connection-records.js';
import { ButlerError } from './errors.js';

/**
 * A call that cannot run until a person connects an account: never connected, lapsed, or without a scope the
 * server now asks for (`scope`: every scope to ask for, space-separated). Nothing ran: the turn parks for the
 * connection, as for a missing one, and the call runs once it is made.
 */
export class ConnectionNeededError extends ButlerError {
  constructor(
    readonly server: string,
    readonly owner: ConnectionOwner,
    readonly scope?: string,
  ) {
    super(
      'connection_needed',
      scope
        ? `${server} needs a connection with the scope "${scope}", so the call did not run. Ask again: Butler sends a link to connect with it.`
        : `The connection to ${server} is not there (or has lapsed), so the call did not run. Ask again: Butler sends a new link to connect.`,
    );
  }
}
