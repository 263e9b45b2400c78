import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/**
 * An MCP server written with the v2 server SDK (`@modelcontextprotocol/server`), which speaks the stateless
 * 2026-07-28 revision to a client that negotiates it and 2025-11-25 to one that does not.
 */
export function create2026McpServer(): McpServer {
  const server = new McpServer({ name: 'butler-test-2026', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Say the text back',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool(
    'pid',
    { description: 'The server process id', annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: String(process.pid) }] }),
  );
  return server;
}
