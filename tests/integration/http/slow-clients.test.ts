import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { connectRaw, drip, type HeldResponse, holdGet, type RawSocket } from '../../helpers/raw-http.js';
import { readEvents, types } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait-for.js';
import { appMention, asJson, envelope, postToSlack, signingSecret } from '../../unit/slack/payloads.js';
import { freshTs } from '../slack/slack-butler.js';

/**
 * Clients that try to hold the server: headers or bodies sent slowly, sockets left idle, API streams filling
 * every connection. Each is cut, closed or refused, while health checks, signed Slack webhooks and long
 * server-sent event answers keep working. The limits are small so the test is quick.
 */

const http = {
  headersTimeoutMs: 1000,
  requestTimeoutMs: 1500,
  keepAliveTimeoutMs: 300,
  maxConnections: 16,
  maxConnectionsPerAddress: 8,
  reservedConnections: 4,
};
const key = 'ci-key-0123456789abcdef';
const authorized = { authorization: `Bearer ${key}` };

let slack: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;
let port: number;

beforeAll(async () => {
  slack = await startFakeSlackApi();
  model = await startFakeModelServer();
  model.setFallback({ text: 'All fine.' });
  app = await startTestButler({
    env: {
      SLACK_BOT_TOKEN: 'xoxb-limits',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      http,
      api: { keys: [{ name: 'ci-bot', key, scopes: ['chat', 'read'] }] },
    },
  });
  port = Number(new URL(app.url).port);
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await slack.close();
});

/** Rejects when `promise` takes longer than `ms` (what the old defaults, 60 s and 300 s, would do). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still going after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const mention = () => postToSlack(`${app.url}/slack/events`, asJson(envelope(appMention({ ts: freshTs() }))));

const openCount = (sockets: readonly RawSocket[]) => sockets.filter((socket) => socket.isOpen()).length;

describe(`HTTP server limits on ${databaseKind}`, () => {
  it('cuts headers sent slowly and closes silent and kept-alive idle sockets', async () => {
    // Slowloris: one header line every 100 ms, never the blank line that ends them.
    const slowHeaders = await connectRaw(port);
    drip(
      slowHeaders,
      ['GET /healthz HTTP/1.1\r\n', ...Array.from({ length: 100 }, (_, index) => `X-Slow-${index}: 1\r\n`)],
      100,
    );
    const silent = await connectRaw(port);
    const keptAlive = await connectRaw(port);
    keptAlive.socket.write('GET /healthz HTTP/1.1\r\nHost: butler\r\n\r\n');

    expect(await within(slowHeaders.closed, 3000, 'slow headers')).toBeLessThan(2500);
    expect(slowHeaders.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(await within(silent.closed, 3000, 'silent socket')).toBeLessThan(2500);
    expect(await within(keptAlive.closed, 3000, 'kept-alive socket')).toBeLessThan(2500);
    expect(keptAlive.received()).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('closes every stalled socket by its deadline while turns run, also the ones over an address cap', async () => {
    // Webhooks answered, their turns still writing (a slow model), then more half-sent requests than one address
    // may hold: the cap closes the oldest, and the header deadline every other one, however busy Butler is.
    model.enqueue(
      ...Array.from({ length: 3 }, () => ({ text: 'Slowly.', chunks: ['Slow', 'ly.'], chunkDelayMs: 1500 })),
    );
    for (let index = 0; index < 3; index += 1) expect((await mention()).status).toBe(200);
    const stalled = await Promise.all(Array.from({ length: 20 }, () => connectRaw(port)));
    for (const raw of stalled)
      raw.socket.write('POST /slack/events HTTP/1.1\r\nHost: butler\r\nContent-Type: app');
    const closedAfter = await Promise.all(stalled.map((raw) => within(raw.closed, 4000, 'stalled socket')));
    expect(Math.max(...closedAfter)).toBeLessThan(3000);
    await app.settle();
  });

  it('answers 408 to a body that drips, while a streamed answer outlives the request deadline', async () => {
    // The answer streams for about 2.4 s, past the 1.5 s request deadline.
    model.enqueue({
      text: 'Deploy looks healthy.',
      chunks: ['Deploy ', 'looks ', 'healthy.'],
      chunkDelayMs: 800,
    });
    const started = Date.now();
    const streamed = fetch(`${app.url}/api/v1/conversations/long-answer/messages`, {
      method: 'POST',
      headers: { ...authorized, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'how is the deploy?' }),
    }).then((response) => readEvents(response));

    const dripping = await connectRaw(port);
    dripping.socket.write(
      [
        'POST /api/v1/conversations/drip/messages HTTP/1.1',
        'Host: butler',
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        'Content-Length: 400',
        '',
        '{"text": "',
      ].join('\r\n'),
    );
    drip(
      dripping,
      Array.from({ length: 390 }, () => 'a'),
      100,
    );
    expect(await within(dripping.closed, 4000, 'dripping body')).toBeLessThan(3500);
    expect(dripping.received()).toMatch(/^HTTP\/1\.1 408 /);

    const events = await streamed;
    expect(types(events)).toEqual(expect.arrayContaining(['delta', 'message']));
    expect(types(events).at(-1)).toBe('done');
    expect(Date.now() - started).toBeGreaterThan(http.requestTimeoutMs);
  });

  it('closes the longest-idle sockets past the caps; health checks and webhooks still get in', async () => {
    // 30 idle sockets from one address, which may hold 8: each new one past 8 closes its oldest.
    const crowd: RawSocket[] = [];
    for (let index = 0; index < 30; index += 1) crowd.push(await connectRaw(port, '127.0.0.2'));
    // Checked well before the headers deadline would close them anyway.
    await waitFor(() => openCount(crowd) <= http.maxConnectionsPerAddress, 500);
    expect(crowd.slice(-http.maxConnectionsPerAddress).every((socket) => socket.isOpen())).toBe(true);

    // Another address fills the rest: the server is at its overall cap, every socket idle.
    const second: RawSocket[] = [];
    for (let index = 0; index < 8; index += 1) second.push(await connectRaw(port, '127.0.0.3'));
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    expect((await mention()).status).toBe(200);
    expect(openCount([...crowd, ...second])).toBeLessThanOrEqual(http.maxConnections - 2);
    for (const socket of [...crowd, ...second]) socket.socket.destroy();
    await app.settle();
  });

  it('keeps the reserve for webhooks: API streams past it get 503, one address past its cap is refused', async () => {
    const streams: HeldResponse[] = [];
    const events = `${app.url}/api/v1/events`;
    try {
      for (let index = 0; index < http.maxConnectionsPerAddress; index += 1)
        streams.push(await holdGet(events, authorized, '127.0.0.4'));
      // Every socket of 127.0.0.4 is busy: the next one is refused.
      await expect(holdGet(events, authorized, '127.0.0.4')).rejects.toThrow();
      const apiPlaces = http.maxConnections - http.reservedConnections;
      while (streams.length < apiPlaces) streams.push(await holdGet(events, authorized, '127.0.0.5'));
      expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));

      const refused = await fetch(`${app.url}/api/v1/me`, { headers: authorized });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({ error: 'server_busy' });
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
      expect((await fetch(`${app.url}/metrics`)).status).toBe(200);
      expect((await mention()).status).toBe(200);

      // A stream that ends gives its place back.
      streams.pop()?.close();
      let status = 0;
      for (const deadline = Date.now() + 5000; status !== 200 && Date.now() < deadline; )
        status = (await fetch(`${app.url}/api/v1/me`, { headers: authorized })).status;
      expect(status).toBe(200);
    } finally {
      for (const stream of streams) stream.close();
    }
    await app.settle();
  });
});
