import type { FakePlatforms, SlackReplyTiming } from './fake-platforms.js';
import { keepAliveAgent, post } from './load.js';
import { freshTs, slackMention, slackUserId } from './platform-requests.js';

/**
 * A closed loop of mentions: `inFlight` senders, each opening a new thread and sending its next mention once
 * that thread got what `advanceOn` names (its first reply call, or its complete reply) at the fake Slack API.
 * Throughput measured this way is bounded by latency (Little's law: in flight / time per turn), where the open
 * loop's is bounded by capacity.
 */

export interface ThreadTiming {
  sentAt: number;
  acknowledgedAt: number | undefined;
  openedAt: number | undefined;
  doneAt: number | undefined;
}

export interface ClosedMentionRun {
  threads: Map<string, ThreadTiming>;
  startedAt: number;
  /** When the last thread got what the loop waited for. */
  endedAt: number;
  /** Threads that never got it within the wait (the loop went on without them). */
  timedOut: number;
}

export async function closedMentionLoop(options: {
  fakes: FakePlatforms;
  url: URL;
  /** The channel, or with `channels` the prefix of the channels `channel0`, `channel1`, … */
  channel: string;
  /** Spread the mentions over this many channels, one sender's next mention in the next one (default 1). */
  channels?: number;
  total: number;
  inFlight: number;
  advanceOn: 'opened' | 'done';
  senders: number;
  /** How long one thread may take before its sender gives up on it and goes on. */
  waitMilliseconds: number;
  /** After the loop, how long to wait for replies still running (so every thread's times are known). */
  drainMilliseconds: number;
}): Promise<ClosedMentionRun> {
  const threads = new Map<string, ThreadTiming>();
  const waiters = new Map<string, () => void>();
  await options.fakes.watch(options.channel, (timing: SlackReplyTiming) => {
    const thread = threads.get(timing.thread);
    if (!thread) return;
    thread.openedAt ??= timing.openedAt;
    thread.doneAt ??= timing.doneAt;
    const reached = options.advanceOn === 'opened' ? thread.openedAt : thread.doneAt;
    if (reached !== undefined) waiters.get(timing.thread)?.();
  });
  const agent = keepAliveAgent(options.inFlight * 4);
  const url = options.url;
  let sent = 0;
  let timedOut = 0;
  const acknowledgements: Array<Promise<void>> = [];
  const startedAt = Date.now();
  const sender = async () => {
    while (sent < options.total) {
      const index = sent++;
      const ts = freshTs();
      const thread: ThreadTiming = {
        sentAt: Date.now(),
        acknowledgedAt: undefined,
        openedAt: undefined,
        doneAt: undefined,
      };
      threads.set(ts, thread);
      const reached = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), options.waitMilliseconds);
        waiters.set(ts, () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      const text = `what is the status of the deploy? [thread ${ts}]`;
      const spread = options.channels ?? 1;
      const mention = slackMention({
        channel: spread > 1 ? `${options.channel}${index % spread}` : options.channel,
        user: slackUserId(index % options.senders),
        ts,
        text,
      });
      // Slack sends the next event without waiting for this one's acknowledgement: neither does the loop.
      acknowledgements.push(
        post(agent, url, mention.request).then((answer) => {
          if (answer.status === 200) thread.acknowledgedAt = Date.now();
        }),
      );
      if (!(await reached)) timedOut += 1;
      waiters.delete(ts);
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, sender));
  await Promise.all(acknowledgements);
  agent.destroy();
  const reachedAt = (thread: ThreadTiming) =>
    options.advanceOn === 'opened' ? thread.openedAt : thread.doneAt;
  const endedAt = Math.max(
    startedAt,
    ...[...threads.values()].map((thread) => reachedAt(thread) ?? startedAt),
  );
  const deadline = Date.now() + options.drainMilliseconds;
  while ([...threads.values()].some((thread) => thread.doneAt === undefined) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return { threads, startedAt, endedAt, timedOut };
}
