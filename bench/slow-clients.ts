import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startButlerProcess } from './lib/butler-process.js';
import { createBenchDatabase, dropBenchDatabase } from './lib/database.js';
import { startFakePlatforms } from './lib/fake-platforms.js';
import { slackMention } from './lib/platform-requests.js';
import { repositoryRoot } from './lib/processes.js';

/**
 * Issue 21, items 10 and 11, measured before and after on Postgres: clients that try to hold the server.
 *
 *   npx tsx bench/slow-clients.ts [earlier-commit]      (default: the commit before the change)
 *
 * 1. 2,000 idle SSE streams from one chat-scoped key: how many are accepted, and /healthz and a signed
 *    Slack webhook's latency while they are open.
 * 2. 400 connections that send half their headers and stall: how long they stay open.
 * 3. 5,000 idle sockets (from 25 local addresses) with Butler's file limit at 4,096: Butler's open files,
 *    and whether /healthz and a signed webhook still answer.
 * Not part of `npm run bench`: it takes a few minutes (the stalled connections stay 60-90 s before).
 */

const beforeCommit = process.argv[2] ?? '14d211e';
const apiKey = 'bench-key-0123456789abcdef';
const streamCount = 2000;
const stalledCount = 400;
const idleCount = 5000;

interface Timed {
  status: number | string;
  ms: number;
}

/** One request on a fresh connection (as Slack and a health checker make them), timed to the answer. */
function timed(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<Timed>((resolve) => {
    const started = performance.now();
    const done = (status: number | string) =>
      resolve({ status, ms: Math.round(performance.now() - started) });
    const outgoing = httpRequest(
      url,
      { method: init.method ?? 'GET', headers: init.headers ?? {}, agent: false, timeout: 120_000 },
      (response) => {
        response.resume();
        response.once('end', () => done(response.statusCode ?? 0));
      },
    );
    outgoing.once('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.once('error', (error) => done((error as NodeJS.ErrnoException).code ?? error.message));
    outgoing.end(init.body);
  });
}

async function latencies(url: string, times: number, make: () => Parameters<typeof timed>[1]) {
  const results: Timed[] = [];
  for (let index = 0; index < times; index += 1) results.push(await timed(url, make()));
  const ok = results.filter((result) => result.status === 200).map((result) => result.ms);
  ok.sort((left, right) => left - right);
  const failed = results.filter((result) => result.status !== 200).map((result) => result.status);
  return {
    median: ok[Math.floor(ok.length / 2)] ?? null,
    max: ok.at(-1) ?? null,
    failed: failed.length > 0 ? `${failed.length}× ${[...new Set(failed)].join(', ')}` : '',
  };
}

function rawSocket(
  port: number,
  localAddress: string,
): Promise<{ socket: Socket; closedAfter: Promise<number> }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.on('data', () => {});
    socket.on('error', () => {});
    const closedAfter = new Promise<number>((done) => socket.once('close', () => done(Date.now() - started)));
    socket.once('connect', () => resolve({ socket, closedAfter }));
    socket.once('close', () => resolve({ socket, closedAfter }));
  });
}

const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(
  label: string,
  checkout: string | undefined,
  platforms: { slackUrl: string; modelUrl: string },
) {
  const database = await createBenchDatabase();
  const butler = await startButlerProcess({
    name: `butler ${label}`,
    database: { kind: 'postgres', url: database },
    slackApiUrl: platforms.slackUrl,
    modelUrl: platforms.modelUrl,
    config: { api: { keys: [{ name: 'ci-bot', key: apiKey, scopes: ['chat', 'read'] }] } },
    env: { LOG_LEVEL: 'warn' },
    ...(checkout ? { checkout } : {}),
  });
  const port = Number(new URL(butler.url).port);
  const health = () => latencies(`${butler.url}/healthz`, 10, () => ({}));
  const webhook = () =>
    latencies(`${butler.url}/slack/events`, 5, () => {
      const { request } = slackMention({ channel: 'C0BENCH', user: 'U0000001' });
      return { method: 'POST', headers: request.headers, body: request.body };
    });
  const row: Record<string, unknown> = { label, idleHealth: await health(), idleWebhook: await webhook() };

  // 1. Idle streams from one key, over 20 conversations.
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  for (let index = 0; index < 20; index += 1)
    await timed(`${butler.url}/api/v1/conversations/c${index}/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ text: 'hello' }),
    });
  const held: Array<{ close(): void }> = [];
  const statuses = await Promise.all(
    Array.from(
      { length: streamCount },
      (_, index) =>
        new Promise<number | string>((resolve) => {
          const outgoing = httpRequest(
            `${butler.url}/api/v1/conversations/c${index % 20}/events`,
            { headers: { ...auth, 'last-event-id': '999999999' }, agent: false },
            (response) => {
              resolve(response.statusCode ?? 0);
              response.resume();
            },
          );
          outgoing.once('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? 'error'));
          outgoing.end();
          held.push({ close: () => outgoing.destroy() });
        }),
    ),
  );
  const counted = new Map<number | string, number>();
  for (const status of statuses) counted.set(status, (counted.get(status) ?? 0) + 1);
  row.streams = [...counted].map(([status, count]) => `${count}× ${status}`).join(', ');
  await sleep(5_000);
  row.streamHealth = await health();
  row.streamWebhook = await webhook();
  for (const stream of held) stream.close();
  await sleep(3_000);

  // 2. Stalled connections: half their headers, then nothing.
  const stalled = await Promise.all(Array.from({ length: stalledCount }, () => rawSocket(port, '127.0.0.1')));
  for (const { socket } of stalled) socket.write('GET /healthz HTTP/1.1\r\nHost: butler\r\n');
  const closedAfter = await Promise.all(
    stalled.map(({ closedAfter }) => Promise.race([closedAfter, sleep(120_000).then(() => Number.NaN)])),
  );
  closedAfter.sort((left, right) => left - right);
  row.stalledClosedMedianMs = closedAfter[Math.floor(closedAfter.length / 2)];
  row.stalledClosedMaxMs = closedAfter.at(-1);
  for (const { socket } of stalled) socket.destroy();

  // 3. Idle sockets past the file limit.
  execFileSync('prlimit', ['--pid', String(butler.service.pid), '--nofile=4096:20000']);
  const idle: Socket[] = [];
  for (let index = 0; index < idleCount; index += 1)
    idle.push((await rawSocket(port, `127.0.1.${1 + (index % 25)}`)).socket);
  await sleep(1_000);
  row.idleOpenFiles = openFiles(butler.service.pid);
  row.idleHealth5000 = await health();
  row.idleWebhook5000 = await webhook();
  for (const socket of idle) socket.destroy();
  row.alive = butler.service.child.exitCode === null ? 'yes' : `exited ${butler.service.child.exitCode}`;

  await butler.stop();
  await dropBenchDatabase(database);
  return row;
}

function earlierCheckout(commit: string): string {
  const directory = join(mkdtempSync(join(tmpdir(), 'butler-before-')), 'butler');
  execFileSync('mkdir', ['-p', directory]);
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C ${directory}`], { cwd: repositoryRoot });
  symlinkSync(join(repositoryRoot, 'node_modules'), join(directory, 'node_modules'), 'dir');
  return directory;
}

const format = (value: unknown) =>
  typeof value === 'object' && value !== null
    ? Object.entries(value)
        .filter(([, part]) => part !== '')
        .map(([name, part]) => `${name} ${part}`)
        .join(', ')
    : String(value);

async function main() {
  const platforms = await startFakePlatforms({ modelReply: 'Fine.', slackUsers: 10 });
  const before = earlierCheckout(beforeCommit);
  try {
    const rows = [
      await measure(`before (${beforeCommit})`, before, platforms),
      await measure('after', undefined, platforms),
    ];
    const keys = Object.keys(rows[0] ?? {});
    process.stdout.write(
      `| what | ${rows.map((row) => row.label).join(' | ')} |\n| --- |${rows.map(() => ' --- |').join('')}\n`,
    );
    for (const key of keys.filter((name) => name !== 'label'))
      process.stdout.write(`| ${key} | ${rows.map((row) => format(row[key])).join(' | ')} |\n`);
  } finally {
    await platforms.stop();
    rmSync(join(before, '..'), { recursive: true, force: true });
  }
}

await main();
