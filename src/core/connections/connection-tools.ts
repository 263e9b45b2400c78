import { z } from 'zod';
import { sharedOwner } from '../contracts/connection-records.js';
import { onPlatform } from '../contracts/events.js';
import { distinctPeople } from '../contracts/people.js';
import { defineTool } from '../tools/define-tool.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import type { ConnectionBook } from './connection-book.js';

/**
 * `list_connections` and `disconnect`: a person sees and ends their own connections (and sees which shared
 * ones exist). Low risk: they touch nothing but the asker's own account, so they run only when one person
 * asked. A shared connection is ended by an admin in the console or the API.
 */

/** The one person a turn answers, or why not. */
function askingPerson(book: ConnectionBook, context: ToolContext) {
  const people = distinctPeople(
    book.people,
    context.requesters.map((requester) => onPlatform(requester, context.address.platform)),
  );
  const [person] = people;
  if (people.length !== 1 || !person)
    throw new Error('several people asked in this turn: each asks about their own connections alone');
  return person;
}

export function createConnectionTools(book: ConnectionBook): Tool[] {
  const list = defineTool({
    name: 'list_connections',
    description:
      'List the accounts (OAuth-protected servers) the asking person has connected to Butler, and the servers connected once for everyone. Shows no tokens.',
    schema: z.object({}).strict(),
    risk: 'low',
    summarize: () => 'List connections',
    async execute(_input, context) {
      const person = askingPerson(book, context);
      const own = book.people.keyOf(person);
      const records = await book.list([own, sharedOwner]);
      const servers = book.serverNames();
      if (servers.length === 0) return 'No server that needs a connection is configured.';
      return servers
        .map((server) => {
          const identity = book.identityOf(server);
          const record = records.find(
            (entry) =>
              entry.server === server && entry.ownerKey === (identity === 'shared' ? sharedOwner : own),
          );
          const whose = identity === 'shared' ? 'shared by everyone' : 'your own account';
          if (!record) return `- ${server} (${whose}): not connected`;
          const scope = record.scope ? `, scope ${JSON.stringify(record.scope)}` : '';
          return `- ${server} (${whose}): connected ${record.createdAt.toISOString()} by ${record.owner.name ?? record.owner.id}${scope}`;
        })
        .join('\n');
    },
  });
  const disconnect = defineTool({
    name: 'disconnect',
    description:
      "Disconnect the asking person's own account from an OAuth-protected server: Butler revokes its tokens at the server (when it offers revocation) and deletes them.",
    schema: z.object({ server: z.string().min(1).max(64) }).strict(),
    risk: 'low',
    summarize: (input) => `Disconnect ${input.server}`,
    async execute(input, context) {
      const person = askingPerson(book, context);
      const identity = book.identityOf(input.server);
      if (!identity) return `No server named ${input.server} needs a connection.`;
      if (identity === 'shared')
        return `${input.server} uses one shared connection: an admin disconnects it in the console or the API.`;
      const outcome = await book.disconnect(input.server, book.people.keyOf(person));
      if (!outcome.deleted) return `${input.server} was not connected.`;
      return outcome.revoked
        ? `Disconnected ${input.server}: the server revoked the tokens and Butler deleted them.`
        : `Disconnected ${input.server}: Butler deleted the tokens (the server offers no revocation, or did not answer).`;
    },
  });
  return [list, disconnect];
}
