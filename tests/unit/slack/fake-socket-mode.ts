import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A minimal Socket Mode endpoint: a WebSocket server (RFC 6455, text frames only) that says
 * `hello`, sends envelopes, and records the client's acknowledgements. Enough for the real
 * @slack/socket-mode client that Bolt uses.
 */

export interface SocketAck {
  envelope_id: string;
  payload?: unknown;
}

export interface FakeSocketMode {
  url: string;
  acks: SocketAck[];
  connections: number;
  send(envelope: Record<string, unknown>): void;
  waitForConnection(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const magic = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x80 | opcode, length])
      : length < 65536
        ? Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(length)]);
  return Buffer.concat([header, payload]);
}

function bigLength(length: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64BE(BigInt(length));
  return buffer;
}

/** Splits complete client frames (always masked) off the buffer. */
function readFrames(buffer: Buffer): { frames: Array<{ opcode: number; payload: Buffer }>; rest: Buffer } {
  const frames: Array<{ opcode: number; payload: Buffer }> = [];
  let offset = 0;
  while (buffer.length - offset >= 2) {
    const opcode = (buffer[offset] ?? 0) & 0x0f;
    const second = buffer[offset + 1] ?? 0;
    let length = second & 0x7f;
    let cursor = offset + 2;
    if (length === 126) {
      if (buffer.length < cursor + 2) break;
      length = buffer.readUInt16BE(cursor);
      cursor += 2;
    } else if (length === 127) {
      if (buffer.length < cursor + 8) break;
      length = Number(buffer.readBigUInt64BE(cursor));
      cursor += 8;
    }
    const masked = (second & 0x80) !== 0;
    const maskEnd = cursor + (masked ? 4 : 0);
    if (buffer.length < maskEnd + length) break;
    const payload = Buffer.from(buffer.subarray(maskEnd, maskEnd + length));
    if (masked) {
      for (let index = 0; index < payload.length; index++) {
        payload[index] = (payload[index] ?? 0) ^ (buffer[cursor + (index % 4)] ?? 0);
      }
    }
    frames.push({ opcode, payload });
    offset = maskEnd + length;
  }
  return { frames, rest: buffer.subarray(offset) };
}

export async function startFakeSocketMode(): Promise<FakeSocketMode> {
  const sockets = new Set<Duplex>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(404);
    response.end();
  });
  const fake: FakeSocketMode = {
    url: '',
    acks: [],
    connections: 0,
    send(envelope) {
      const data = frame(0x1, Buffer.from(JSON.stringify(envelope)));
      for (const socket of sockets) socket.write(data);
    },
    async waitForConnection(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (sockets.size === 0) {
        if (Date.now() > deadline) throw new Error('no Socket Mode connection');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };

  server.on('upgrade', (request, socket) => {
    const key = String(request.headers['sec-websocket-key'] ?? '');
    const accept = createHash('sha1')
      .update(key + magic)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    sockets.add(socket);
    fake.connections += 1;
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const { opcode, payload } of frames) {
        if (opcode === 0x9) socket.write(frame(0xa, payload));
        else if (opcode === 0x8) socket.end(frame(0x8, Buffer.alloc(0)));
        else if (opcode === 0x1) fake.acks.push(JSON.parse(payload.toString('utf8')) as SocketAck);
      }
    });
    socket.write(
      frame(
        0x1,
        Buffer.from(
          JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0BUTLER' } }),
        ),
      ),
    );
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `ws://127.0.0.1:${port}/link/?ticket=test`;
  return fake;
}
