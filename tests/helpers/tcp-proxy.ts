import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Postgres that a test can break the way networks break: `refuse()` drops every
 * connection and refuses new ones (the server stopped); `blackhole()` keeps connections open but moves no
 * byte (a stalled network: nothing fails, everything hangs, and TCP delivers it all once the network is
 * back). `restore()` heals both.
 */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  refuse(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let state: 'open' | 'blackhole' | 'refused' = 'open';
  let server: Server;
  let port = 0;

  /** Bytes held back while the network is stalled, delivered in order once it is back. */
  const held: Array<{ to: Socket; chunk: Buffer }> = [];
  const forward = (to: Socket) => (chunk: Buffer) => {
    if (state === 'open') to.write(chunk);
    else held.push({ to, chunk });
  };
  const pipe = (pair: [Socket, Socket]) => {
    const [client, upstream] = pair;
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  };

  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        pipe(pair);
      });
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        if (typeof address === 'object' && address) port = address.port;
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  await listen();
  return {
    get port() {
      return port;
    },
    via(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async refuse() {
      state = 'refused';
      held.length = 0;
      const closed = stopListening();
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      await closed;
    },
    blackhole() {
      state = 'blackhole';
    },
    async restore() {
      if (state === 'refused') await listen();
      state = 'open';
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      if (state !== 'refused') await stopListening();
    },
  };
}
