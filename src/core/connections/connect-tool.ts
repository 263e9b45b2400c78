import { onPlatform } from '../contracts/events.js';
import { mcpToolName } from '../tools/mcp/tool-name.js';
import type { Tool } from '../tools/tool.js';
import type { ConnectionBook } from './connection-book.js';

/**
 * `<server>__connect`: what the model can call for a server whose tools nobody has seen yet (and later, for a
 * person who wants to connect ahead of need). It needs the asker's connection like every tool of the server,
 * so the turn waits while Butler sends that person a private Connect link; once connected, it says what the
 * server offers and the turn goes on.
 */
export function connectTool(server: string, book: ConnectionBook): Tool<Record<string, never>> {
  return {
    name: mcpToolName(server, 'connect'),
    description: `Connect the asking person's own ${server} account, so that ${server}'s tools run as them. Butler sends them a private link and goes on once they have connected; call it when they ask to use ${server} and its tools are not offered yet.`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    risk: 'low',
    connection: { server, identity: 'person' },
    parse: () => ({ ok: true, value: {} }),
    summarize: () => `Connect ${server}`,
    async execute(_input, context) {
      const person = onPlatform(context.requester, context.address.platform);
      const listed = ((await book.toolList(server)) ?? []) as Array<{ name: string }>;
      const names = listed.map((tool) => mcpToolName(server, tool.name));
      const who = book.people.nameOf(person) ?? person.name ?? person.id;
      return names.length > 0
        ? `${server} is connected as ${who}. Its tools: ${names.join(', ')}.`
        : `${server} is connected as ${who}; it offers no tools.`;
    },
  };
}
