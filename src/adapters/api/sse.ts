import type { ServerResponse } from 'node:http';

/**
 * A server-sent events response: one JSON object per event in `data`, with its `id` for `Last-Event-ID`.
 * A comment line every 15 s keeps proxies from closing a quiet stream.
 */
export class SseStream {
  private readonly heartbeat: NodeJS.Timeout;
  private closedByClient = false;

  constructor(
    private readonly response: ServerResponse,
    /** Streams still open, so that a shutdown can end them (the HTTP server waits for open requests). */
    private readonly open: Set<SseStream>,
  ) {
    open.add(this);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.flushHeaders();
    this.heartbeat = setInterval(() => this.response.write(': keep-alive\n\n'), 15_000);
    this.heartbeat.unref();
    response.on('close', () => {
      this.closedByClient = !response.writableEnded;
      clearInterval(this.heartbeat);
      open.delete(this);
    });
  }

  /** The client went away, or the stream was ended. */
  get closed(): boolean {
    return this.closedByClient || this.response.destroyed || this.response.writableEnded;
  }

  /** Whether the client still reads fast enough (a full socket buffer means it does not). */
  get keepingUp(): boolean {
    return !this.response.writableNeedDrain;
  }

  /** Calls `listener` once the client has gone or the stream has ended (at once if it already has). */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.response.once('close', listener);
  }

  send(event: unknown, id?: number | string): void {
    if (this.closed) return;
    this.response.write(`${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(event)}\n\n`);
  }

  end(): void {
    clearInterval(this.heartbeat);
    this.open.delete(this);
    if (!this.response.writableEnded) this.response.end();
  }
}
