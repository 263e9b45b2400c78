import { describe, expect, it } from 'vitest';
import { cappedFetch } from '../../../src/core/tools/mcp/capped-fetch.js';

/**
 * The byte cap on MCP messages, over bodies cut into chunks at awkward places. A server on the network
 * cannot choose where TCP splits its bytes, so these are driven by a fetch that answers the given chunks.
 */

const encoder = new TextEncoder();

function answering(chunks: readonly string[], contentType: string) {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
          controller.close();
        },
      }),
      { headers: { 'content-type': contentType } },
    );
}

const callRequest = {
  method: 'POST',
  body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'dump' } }),
};

describe('cappedFetch', () => {
  // SSE lets a line end with CRLF, LF or CR, and a chunk may end between the CR and the LF. Each stream is
  // longer than its cap while each of its events is shorter, so it passes only if every event end is found.
  const streams = [
    { cap: 20, chunks: ['data: {"a":1}\n\n', 'data: {"b":2}\n\n'] },
    { cap: 20, chunks: ['data: {"a":1}\r', '\n\r', '\ndata: {"b":2}\r\n\r\n'] },
    { cap: 20, chunks: ['data: {"a":1}\r\rdata: {"b"', ':2}\r\r'] },
    { cap: 40, chunks: ['event: message\nid: 1\ndata: {"a":', '1}\n', '\n: keep-alive\n\n'] },
  ];

  it.each(streams)('passes events under the cap through unchanged: $chunks', async ({ cap, chunks }) => {
    const fetch = cappedFetch(cap, answering(chunks, 'text/event-stream'));
    const response = await fetch('http://mcp.test/', callRequest);
    expect(await response.text()).toBe(chunks.join(''));
  });

  it('drops an event past the cap and answers the request with an error in its place', async () => {
    const oversized = `data: {"jsonrpc":"2.0","id":7,"result":"${'x'.repeat(60)}`;
    const chunks = ['data: {"progress":1}\n\n', oversized.slice(0, 30), oversized.slice(30), '"}\n\n'];
    const fetch = cappedFetch(40, answering(chunks, 'text/event-stream; charset=utf-8'));
    const text = await (await fetch('http://mcp.test/', callRequest)).text();
    const [progress, answer] = text.split('\n\n');
    expect(progress).toBe('data: {"progress":1}');
    expect(JSON.parse(answer?.replace(/^data: /, '') ?? '')).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32603,
        message: "the server's answer was larger than 40 bytes (maxResponseBytes); Butler stopped reading it",
      },
    });
  });

  it('counts a whole JSON body as one message', async () => {
    const fetch = cappedFetch(
      40,
      answering(['{"jsonrpc":"2.0","id":7,', '"result":"', 'x'.repeat(40), '"}'], 'application/json'),
    );
    expect(await (await fetch('http://mcp.test/', callRequest)).json()).toMatchObject({
      id: 7,
      error: { code: -32603 },
    });
  });

  it('errors a stream that answers no request of its own (the GET stream)', async () => {
    const fetch = cappedFetch(40, answering([`data: ${'x'.repeat(50)}\n\n`], 'text/event-stream'));
    const response = await fetch('http://mcp.test/', { method: 'GET' });
    await expect(response.text()).rejects.toThrow('larger than 40 bytes');
  });
});
