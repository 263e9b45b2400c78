import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible model that streams a fixed reply in chunks a fixed interval apart and records,
 * per request, when it wrote the first and the last content chunk (Date.now(), like the fake platform
 * APIs, so the times compare directly).
 */

export interface StreamedCompletion {
  receivedAt: number;
  firstTokenAt: number | undefined;
  lastTokenAt: number | undefined;
  chunks: number;
}

export interface StreamingModel {
  baseUrl: string;
  completions: StreamedCompletion[];
  close(): Promise<void>;
}

/** One to three words per chunk, the way chat models' deltas look. */
export function chunkText(text: string): string[] {
  return text.match(/(?:\s*\S+){1,3}\s*/g) ?? [];
}

export async function startStreamingModel(options: { reply: string; chunkDelayMilliseconds: number }) {
  const completions: StreamedCompletion[] = [];
  const chunks = chunkText(options.reply);
  const server = createServer((request, response) => {
    request.on('data', () => {});
    request.on('end', () => {
      const completion: StreamedCompletion = {
        receivedAt: Date.now(),
        firstTokenAt: undefined,
        lastTokenAt: undefined,
        chunks: chunks.length,
      };
      completions.push(completion);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const event = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({
          id: `chatcmpl-bench-${completions.length}`,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: 'bench-model',
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      response.write(event({ role: 'assistant', content: '' }));
      let index = 0;
      const timer = setInterval(() => {
        if (response.destroyed) {
          clearInterval(timer);
          return;
        }
        const piece = chunks[index];
        if (piece !== undefined) {
          response.write(event({ content: piece }));
          const now = Date.now();
          completion.firstTokenAt ??= now;
          completion.lastTokenAt = now;
          index += 1;
          return;
        }
        clearInterval(timer);
        response.write(event({}, 'stop'));
        const usage = {
          prompt_tokens: 500,
          completion_tokens: chunks.length * 2,
          total_tokens: 500 + chunks.length * 2,
        };
        response.write(
          `data: ${JSON.stringify({ id: 'usage', object: 'chat.completion.chunk', created: 0, model: 'bench-model', choices: [], usage })}\n\n`,
        );
        response.end('data: [DONE]\n\n');
      }, options.chunkDelayMilliseconds);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    completions,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  } satisfies StreamingModel;
}
