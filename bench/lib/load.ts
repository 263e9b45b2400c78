import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The load generator: POSTs over a keep-alive agent, either closed-loop (N requests in flight, each
 * worker sending its next request when the previous one is answered) or open-loop (a fixed rate,
 * whatever the server's answers do). Latency is request start to the last byte of the answer.
 */

export interface OutgoingRequest {
  body: string;
  headers: Record<string, string>;
}

export interface Answer {
  status: number;
  milliseconds: number;
}

export function keepAliveAgent(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

export function post(agent: Agent, url: URL, outgoing: OutgoingRequest): Promise<Answer> {
  return new Promise((resolve) => {
    const started = performance.now();
    const body = Buffer.from(outgoing.body);
    const sent = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...outgoing.headers, 'content-length': String(body.length) },
      },
      (response) => {
        response.on('data', () => {});
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, milliseconds: performance.now() - started }),
        );
        response.on('error', () => resolve({ status: 0, milliseconds: performance.now() - started }));
      },
    );
    sent.on('error', () => resolve({ status: 0, milliseconds: performance.now() - started }));
    sent.end(body);
  });
}

export interface ClosedLoopOptions {
  url: URL;
  concurrency: number;
  /** Requests sent before this are not measured (JIT warm-up, connection set-up). */
  warmupMilliseconds: number;
  durationMilliseconds: number;
  next: () => OutgoingRequest;
}

export interface ClosedLoopResult {
  /** Latencies of 2xx answers inside the measured window. */
  latencies: number[];
  /** 2xx answers inside the measured window. */
  succeeded: number;
  /** Non-2xx answers and connection errors, at any time. */
  failed: number;
  /** 2xx answers over the whole run, warm-up included (what the server was asked to store). */
  acknowledgedTotal: number;
  measuredSeconds: number;
  statuses: Record<string, number>;
}

export async function closedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const agent = keepAliveAgent(options.concurrency);
  const start = performance.now();
  const measureFrom = start + options.warmupMilliseconds;
  const stopAt = measureFrom + options.durationMilliseconds;
  const result: ClosedLoopResult = {
    latencies: [],
    succeeded: 0,
    failed: 0,
    acknowledgedTotal: 0,
    measuredSeconds: options.durationMilliseconds / 1000,
    statuses: {},
  };
  const worker = async () => {
    while (performance.now() < stopAt) {
      const sentAt = performance.now();
      const answer = await post(agent, options.url, options.next());
      const key = String(answer.status);
      result.statuses[key] = (result.statuses[key] ?? 0) + 1;
      const ok = answer.status >= 200 && answer.status < 300;
      if (ok) result.acknowledgedTotal += 1;
      else result.failed += 1;
      if (ok && sentAt >= measureFrom && sentAt < stopAt) {
        result.succeeded += 1;
        result.latencies.push(answer.milliseconds);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  agent.destroy();
  return result;
}

export interface OpenLoopOptions {
  ratePerSecond: number;
  durationMilliseconds: number;
  /** Sends request number `index`; the promise is the acknowledgement. */
  send: (index: number) => Promise<Answer>;
}

export interface OpenLoopResult {
  sent: number;
  acknowledged: number;
  failed: number;
  acknowledgements: number[];
  /** How far behind schedule the generator itself fell at worst (ms): it must stay small. */
  worstLagMilliseconds: number;
}

/** Sends at a fixed rate (schedule: request i at i / rate seconds), never waiting for answers. */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const total = Math.round((options.ratePerSecond * options.durationMilliseconds) / 1000);
  const interval = 1000 / options.ratePerSecond;
  const start = performance.now();
  const pending: Array<Promise<Answer>> = [];
  let worstLag = 0;
  let index = 0;
  while (index < total) {
    const now = performance.now();
    while (index < total && start + index * interval <= now) {
      worstLag = Math.max(worstLag, now - (start + index * interval));
      pending.push(options.send(index));
      index += 1;
    }
    const wait = start + index * interval - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.floor(wait))));
  }
  const answers = await Promise.all(pending);
  const acknowledged = answers.filter((answer) => answer.status >= 200 && answer.status < 300);
  return {
    sent: total,
    acknowledged: acknowledged.length,
    failed: answers.length - acknowledged.length,
    acknowledgements: acknowledged.map((answer) => answer.milliseconds),
    worstLagMilliseconds: worstLag,
  };
}
