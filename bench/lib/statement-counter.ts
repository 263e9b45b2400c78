import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Postgres that counts what clients ask of the server, by reading the
 * frontend side of the wire protocol: every simple query ('Q') and every Execute of the extended
 * protocol ('E') is one statement, whatever the driver or ORM above it does. Bytes pass through
 * unchanged. Used to report statements per turn without touching Butler's code or the server's
 * configuration (pg_stat_statements needs a server restart).
 */

export interface StatementCounter {
  /** The database URL to give the client: the same database, through the proxy. */
  url: string;
  statements(): number;
  close(): Promise<void>;
}

const untypedCodes = new Set([
  80_877_103, // SSLRequest
  80_877_104, // GSSENCRequest
  80_877_102, // CancelRequest
]);

/** Parses one client's frontend stream incrementally and counts statements. */
class FrontendParser {
  private buffered: Buffer = Buffer.alloc(0);
  /** Until the startup message went by, messages have no type byte. */
  private startup = true;

  constructor(private readonly onStatement: () => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.startup) {
        if (this.buffered.length < 8) return;
        const length = this.buffered.readInt32BE(0);
        if (this.buffered.length < length) return;
        // SSL and GSS requests come before the real startup message; anything else is the startup.
        if (!untypedCodes.has(this.buffered.readInt32BE(4))) this.startup = false;
        this.buffered = this.buffered.subarray(length);
        continue;
      }
      if (this.buffered.length < 5) return;
      const length = this.buffered.readInt32BE(1);
      if (this.buffered.length < length + 1) return;
      const type = String.fromCharCode(this.buffered[0] ?? 0);
      if (type === 'Q' || type === 'E') this.onStatement();
      this.buffered = this.buffered.subarray(length + 1);
    }
  }
}

export async function startStatementCounter(databaseUrl: string): Promise<StatementCounter> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let statements = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(client).add(upstream);
    const parser = new FrontendParser(() => {
      statements += 1;
    });
    client.on('data', (chunk: Buffer) => {
      parser.push(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('statement counter has no port');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    statements: () => statements,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
