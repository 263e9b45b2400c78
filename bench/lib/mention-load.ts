import type { FakePlatforms, SlackReplyTiming } from './fake-platforms.js';
import { keepAliveAgent, type OpenLoopResult, openLoop, post } from './load.js';
import { freshTs, slackMention, slackUserId } from './platform-requests.js';

/**
 * Mentions at a fixed offered rate, each opening its own thread, and the replies they got at the fake
 * Slack API. Shared by the benchmarks that follow a mention to its reply.
 */

export interface MentionRun {
  load: OpenLoopResult;
  /** When each thread's mention was sent, by thread ts. */
  sentAt: Map<string, number>;
  replies: SlackReplyTiming[];
  /** Replies that completed. */
  completed: number;
}

export async function mentionRun(options: {
  fakes: FakePlatforms;
  /** Where to post; several targets take the mentions in turn (processes sharing one database). */
  urls: readonly URL[];
  channel: string;
  ratePerSecond: number;
  count: number;
  senders: number;
  drainMilliseconds: number;
  /** Put `[thread <ts>]` in each question, so the model's requests can be told apart by thread. */
  tagThreads?: boolean;
}): Promise<MentionRun> {
  const agent = keepAliveAgent(256);
  const sentAt = new Map<string, number>();
  const load = await openLoop({
    ratePerSecond: options.ratePerSecond,
    durationMilliseconds: (options.count / options.ratePerSecond) * 1000,
    send: (index) => {
      const ts = freshTs();
      const mention = slackMention({
        channel: options.channel,
        user: slackUserId(index % options.senders),
        ts,
        ...(options.tagThreads ? { text: `what is the status of the deploy? [thread ${ts}]` } : {}),
      });
      sentAt.set(ts, Date.now());
      return post(agent, options.urls[index % options.urls.length] as URL, mention.request);
    },
  });
  agent.destroy();
  const deadline = Date.now() + options.drainMilliseconds;
  let replies = await options.fakes.slackReplies(options.channel);
  const done = () => replies.filter((reply) => reply.doneAt !== undefined).length;
  while (done() < load.acknowledged && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    replies = await options.fakes.slackReplies(options.channel);
  }
  return { load, sentAt, replies, completed: done() };
}

/** Completed replies per second, from the first send to the last completed reply. */
export function turnsPerSecond(run: MentionRun): number {
  const firstSent = Math.min(...run.sentAt.values());
  const lastDone = Math.max(firstSent, ...run.replies.map((reply) => reply.doneAt ?? firstSent));
  return run.completed / ((lastDone - firstSent) / 1000);
}
