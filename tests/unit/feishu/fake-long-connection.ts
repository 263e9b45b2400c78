import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { FakeFeishuApi, Json } from '../../helpers/fake-feishu-api.js';

/**
 * Feishu's long-connection gateway, enough for the SDK's WSClient: `POST /callback/ws/endpoint` hands out a
 * WebSocket URL on the fake's own server, and events go down as protobuf `pbbp2.Frame`s (encoded here by
 * hand; field numbers from the SDK's generated codec). The SDK answers each event frame with a frame whose
 * payload is `{code, data: base64(handler result)}`.
 */

export interface Frame {
  seqId: number;
  logId: number;
  service: number;
  method: number;
  headers: Record<string, string>;
  payload: Buffer;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function field(number: number, value: number | Buffer): Buffer {
  if (typeof value === 'number') return Buffer.concat([varint(number << 3), varint(value)]);
  return Buffer.concat([varint((number << 3) | 2), varint(value.length), value]);
}

export function encodeFrame(frame: Frame): Buffer {
  const headers = Object.entries(frame.headers).map(([key, value]) =>
    field(5, Buffer.concat([field(1, Buffer.from(key)), field(2, Buffer.from(value))])),
  );
  return Buffer.concat([
    field(1, frame.seqId),
    field(2, frame.logId),
    field(3, frame.service),
    field(4, frame.method),
    ...headers,
    field(8, frame.payload),
  ]);
}

function readVarint(buffer: Buffer, offset: number): [number, number] {
  let value = 0;
  let scale = 1;
  let position = offset;
  for (;;) {
    const byte = buffer[position] as number;
    value += (byte & 0x7f) * scale;
    position += 1;
    if (byte < 0x80) return [value, position];
    scale *= 0x80;
  }
}

function readFields(buffer: Buffer): Array<[number, number | Buffer]> {
  const fields: Array<[number, number | Buffer]> = [];
  let position = 0;
  while (position < buffer.length) {
    const [tag, afterTag] = readVarint(buffer, position);
    if ((tag & 7) === 0) {
      const [value, next] = readVarint(buffer, afterTag);
      fields.push([tag >>> 3, value]);
      position = next;
    } else {
      const [length, start] = readVarint(buffer, afterTag);
      fields.push([tag >>> 3, buffer.subarray(start, start + length)]);
      position = start + length;
    }
  }
  return fields;
}

export function decodeFrame(buffer: Buffer): Frame {
  const frame: Frame = { seqId: 0, logId: 0, service: 0, method: 0, headers: {}, payload: Buffer.alloc(0) };
  for (const [number, value] of readFields(buffer)) {
    if (number === 1) frame.seqId = value as number;
    if (number === 2) frame.logId = value as number;
    if (number === 3) frame.service = value as number;
    if (number === 4) frame.method = value as number;
    if (number === 8) frame.payload = value as Buffer;
    if (number === 5) {
      const header = new Map(readFields(value as Buffer));
      frame.headers[String(header.get(1))] = String(header.get(2));
    }
  }
  return frame;
}

/** The small part of the `ws` package (the SDK's own dependency) used here. */
interface Socket {
  send(data: Buffer): void;
  close(): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
}
interface SocketServer {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, done: (socket: Socket) => void): void;
  close(): void;
}
const { WebSocketServer } = createRequire(import.meta.url)('ws') as {
  WebSocketServer: new (options: { noServer: true }) => SocketServer;
};

const serviceId = 7;
const dataFrame = 1;

export class FakeLongConnection {
  readonly sockets: Socket[] = [];
  readonly responses: Frame[] = [];
  endpointCalls = 0;
  private readonly server: SocketServer = new WebSocketServer({ noServer: true });
  private sequence = 0;

  constructor(fake: FakeFeishuApi) {
    fake.extraRoutes.push((call) => {
      if (call.path !== '/callback/ws/endpoint') return undefined;
      this.endpointCalls += 1;
      const url = `${fake.baseUrl.replace('http', 'ws')}/ws?device_id=device_1&service_id=${serviceId}`;
      // Reconnect quickly (0.1 s, no jitter) so tests need not wait the production two minutes.
      const clientConfig = {
        PingInterval: 120,
        ReconnectCount: -1,
        ReconnectInterval: 0.1,
        ReconnectNonce: 0,
      };
      return { status: 200, body: { code: 0, msg: 'ok', data: { URL: url, ClientConfig: clientConfig } } };
    });
    fake.httpServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.server.handleUpgrade(request, socket, head, (client) => {
        this.sockets.push(client);
        client.on('message', (data) => this.responses.push(decodeFrame(Buffer.from(data))));
      });
    });
  }

  get current(): Socket | undefined {
    return this.sockets.at(-1);
  }

  /** Pushes an event (or callback) to the connected client; resolves with the handler's decoded answer. */
  async push(payload: Json, timeoutMs = 3_000): Promise<{ code: number; data: unknown }> {
    const socket = this.current;
    if (!socket) throw new Error('no long connection');
    this.sequence += 1;
    const messageId = `msg_${this.sequence}`;
    socket.send(
      encodeFrame({
        seqId: this.sequence,
        logId: this.sequence,
        service: serviceId,
        method: dataFrame,
        headers: {
          type: 'event',
          message_id: messageId,
          sum: '1',
          seq: '0',
          trace_id: `trace_${this.sequence}`,
        },
        payload: Buffer.from(JSON.stringify(payload)),
      }),
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = this.responses.find((frame) => frame.headers.message_id === messageId);
      if (response) {
        const body = JSON.parse(response.payload.toString()) as { code: number; data?: string };
        const data = body.data ? JSON.parse(Buffer.from(body.data, 'base64').toString()) : undefined;
        return { code: body.code, data };
      }
      if (Date.now() > deadline) throw new Error(`no answer to ${messageId}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  close(): void {
    for (const socket of this.sockets) socket.terminate();
    this.server.close();
  }
}
