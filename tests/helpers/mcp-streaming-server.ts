import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { streamBytes } from './tool-server.js';

/**
 * Just enough of a Streamable HTTP MCP server to answer `tools/call` of its one tool, `dump`, with a result
 * of `resultBytes` bytes written only as fast as the client reads them, as JSON or as one SSE event. The
 * official SDK server builds a whole result in memory and writes it at once, so only a server like this one
 * can show whether the client stopped reading.
 */

export interface McpStreamingServer {
  url: string;
  /** One per `dump` call: true if its answer was written to the end, false if the client stopped reading. */
  streams: Array<Promise<boolean>>;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<{ id?: number | string; method?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function startMcpStreamingServer(options: {
  resultBytes: number;
  answerAs: 'json' | 'sse';
}): Promise<McpStreamingServer> {
  const streams: Array<Promise<boolean>> = [];
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(request.method === 'DELETE' ? 200 : 405).end();
      return;
    }
    const message = await readJson(request);
    const headers = { 'mcp-session-id': 'streaming-session' };
    if (message.id === undefined) {
      response.writeHead(202, headers).end();
      return;
    }
    const reply = (result: unknown) => {
      response.writeHead(200, { ...headers, 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    };
    if (message.method === 'initialize') {
      reply({
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'streaming', version: '1.0.0' },
      });
    } else if (message.method === 'tools/list') {
      reply({
        tools: [{ name: 'dump', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
      });
    } else if (message.method === 'tools/call') {
      const sse = options.answerAs === 'sse';
      response.writeHead(200, { ...headers, 'content-type': sse ? 'text/event-stream' : 'application/json' });
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`;
      response.write(sse ? `event: message\ndata: ${head}` : head);
      streams.push(streamBytes(response, options.resultBytes, { end: sse ? '"}]}}\n\n' : '"}]}}' }));
    } else {
      reply({});
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    streams,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
