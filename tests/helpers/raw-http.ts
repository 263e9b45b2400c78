import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * Clients that misbehave on purpose (stall, drip, sit idle), from a chosen local address: Linux answers on
 * every 127.x.y.z, so one test machine can be many remote addresses.
 */

export interface RawSocket {
  socket: Socket;
  /** What the server sent so far. */
  received(): string;
  isOpen(): boolean;
  /** Resolves with the milliseconds from connecting until the server closed the socket. */
  closed: Promise<number>;
}

export function connectRaw(port: number, localAddress = '127.0.0.1'): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    let open = true;
    // Reading keeps the socket flowing, so its end is seen as soon as the server closes it.
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    const closed = new Promise<number>((done) =>
      socket.once('close', () => {
        open = false;
        done(Date.now() - started);
      }),
    );
    socket.once('connect', () =>
      resolve({ socket, received: () => text, isOpen: () => open && !socket.destroyed, closed }),
    );
    socket.once('error', reject);
  });
}

/** Writes `parts` one every `everyMs` until the socket closes or they run out. */
export function drip(raw: RawSocket, parts: readonly string[], everyMs: number): void {
  let index = 0;
  const timer = setInterval(() => {
    const part = parts[index++];
    if (part === undefined || !raw.isOpen()) return clearInterval(timer);
    raw.socket.write(part);
  }, everyMs);
  raw.closed.then(() => clearInterval(timer));
}

export interface HeldResponse {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body read so far. */
  body(): string;
  /** Resolves when the server ends the response or the connection goes. */
  ended: Promise<void>;
  isOpen(): boolean;
  close(): void;
}

/** A GET whose response is kept open (a server-sent event stream), from `localAddress`. */
export function holdGet(
  url: string,
  headers: Record<string, string>,
  localAddress = '127.0.0.1',
): Promise<HeldResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { headers, localAddress, agent: false }, (response) => {
      let text = '';
      let open = true;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      const ended = new Promise<void>((done) => {
        const finish = () => {
          open = false;
          done();
        };
        response.once('end', finish);
        response.once('close', finish);
        response.once('error', finish);
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        body: () => text,
        ended,
        isOpen: () => open,
        close: () => outgoing.destroy(),
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}
