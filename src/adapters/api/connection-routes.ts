import type { ConnectionBook } from '../../core/connections/index.js';
import { type ConnectionRecord, sharedOwner } from '../../core/contracts/connection-records.js';
import type { Person } from '../../core/contracts/events.js';
import type { Caller } from './auth.js';
import { ApiError, sendJson } from './http-json.js';
import type { Route } from './routes.js';

/**
 * People's connections to OAuth-protected servers, never with a token: a key lists and ends its person's own,
 * and gets a Connect link for itself (to open in a browser); an admin (a key with the read scope) sees and
 * ends everyone's, and makes the one shared connection of a `shared` server. With no server that wants OAuth
 * (`book` absent) the list is empty, and every server is unknown.
 */

const isAdmin = (caller: Caller) => caller.scopes.includes('read');
const keyPerson = (caller: Caller): Person => ({ platform: 'api', id: caller.name, name: caller.name });
const serverName = /^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$/;

const item = (record: ConnectionRecord) => ({
  server: record.server,
  owner: record.ownerKey,
  connectedBy: { platform: record.owner.platform, id: record.owner.id, name: record.owner.name ?? null },
  connectedAt: record.createdAt.toISOString(),
  updatedAt: record.updatedAt.toISOString(),
  expiresAt: record.expiresAt?.toISOString() ?? null,
  scope: record.scope,
});

export function connectionRoutes(configured: ConnectionBook | undefined): Route[] {
  /** The server named in the path, which must want OAuth, and the book that knows it. */
  const serverOf = (raw: string | undefined) => {
    const server = raw ?? '';
    if (!configured || !serverName.test(server) || !configured.identityOf(server))
      throw new ApiError(404, 'not_found', `No server named ${server} needs a connection.`);
    return { server, book: configured };
  };
  return [
    {
      method: 'GET',
      pattern: /^\/connections$/,
      scope: 'any',
      async handle({ response, caller }) {
        const book = configured;
        if (!book) return sendJson(response, 200, { servers: [], items: [] });
        const records = isAdmin(caller)
          ? await book.list()
          : await book.list([book.people.keyOf(keyPerson(caller)), sharedOwner]);
        sendJson(response, 200, {
          servers: book.serverNames().map((server) => ({ name: server, identity: book.identityOf(server) })),
          items: records.map(item),
        });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/connections\/([^/]+)$/,
      scope: 'any',
      async handle({ response, caller, params, query }) {
        const { server, book } = serverOf(params[0]);
        const own = book.people.keyOf(keyPerson(caller));
        const owner = query.get('owner') ?? (book.identityOf(server) === 'shared' ? sharedOwner : own);
        if (owner !== own && !isAdmin(caller))
          throw new ApiError(
            403,
            'forbidden',
            'Only an admin (a key with the read scope) ends a connection that is not its own.',
          );
        const outcome = await book.disconnect(server, owner);
        if (!outcome.deleted)
          throw new ApiError(404, 'not_found', `${owner} has no connection to ${server}.`);
        sendJson(response, 200, { server, owner, revoked: outcome.revoked });
      },
    },
    {
      method: 'POST',
      pattern: /^\/connections\/([^/]+)\/link$/,
      scope: 'any',
      async handle({ response, caller, params }) {
        const { server, book } = serverOf(params[0]);
        const person = keyPerson(caller);
        const shared = book.identityOf(server) === 'shared';
        if (shared && !isAdmin(caller))
          throw new ApiError(
            403,
            'forbidden',
            `${server} has one shared connection: only an admin makes it.`,
          );
        const owner = shared ? { key: sharedOwner, person } : book.ownerFor(server, person);
        const link = await book.offerLink(server, owner);
        sendJson(response, 201, {
          server,
          owner: owner.key,
          url: link.url,
          expiresAt: link.expiresAt.toISOString(),
        });
      },
    },
  ];
}
