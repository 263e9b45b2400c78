import { type ChildService, startNodeProcess, waitForMessage } from './processes.js';

/** The parent's handle on the fakes process (bench/servers/fake-platforms.ts). */

export interface SlackReplyTiming {
  thread: string;
  /** The first reply call in the thread, text or not (a stream may open empty). */
  openedAt: number | undefined;
  /** First call that put reply text in the thread (a post, or a stream call carrying text). */
  firstAt: number | undefined;
  /** When the reply was complete: chat.stopStream of a streamed reply, else its chat.postMessage. */
  doneAt: number | undefined;
}

export interface ModelTiming {
  thread: string;
  receivedAt: number;
  answeredAt: number | undefined;
}

export interface FakePlatformUrls {
  slackUrl: string;
  modelUrl: string;
  feishuUrl: string;
}

/** What a benchmark can change in the fakes; `reset()` goes back to the defaults. */
export interface FakeSettings {
  /** Slack answers 429 past its rate tiers (tests/helpers/fake-slack-rate-tiers.ts). */
  rateTiers?: boolean;
  /** The model's answer, instead of the default one sent at once. */
  modelReply?: { text: string; chunks?: string[]; chunkDelayMs?: number };
  /** Slack treats the app as an agent (agent sessions, chat.stopStream's session_status). */
  agentSessions?: boolean;
}

/** One Web API call the fake Slack received: its method, when, and whether it answered 429. */
export interface SlackCallRecord {
  method: string;
  at: number;
  limited: boolean;
}

export interface FakePlatforms extends FakePlatformUrls {
  service: ChildService;
  reset(): Promise<void>;
  configure(settings: FakeSettings): Promise<void>;
  /**
   * Calls `listener` as each thread of the channels whose id starts with `channel` gets its first reply call,
   * and again when it is complete.
   */
  watch(channel: string, listener: (timing: SlackReplyTiming) => void): Promise<void>;
  slackReplies(channel: string): Promise<SlackReplyTiming[]>;
  modelTimings(): Promise<ModelTiming[]>;
  counts(): Promise<Record<string, number>>;
  /** Every Slack call since the last reset, in order. */
  slackCalls(): Promise<SlackCallRecord[]>;
  stop(): Promise<void>;
}

export async function startFakePlatforms(options: {
  modelReply: string;
  slackUsers: number;
}): Promise<FakePlatforms> {
  const service = startNodeProcess({
    name: 'fake platforms',
    nodeArguments: ['--import', 'tsx', 'bench/servers/fake-platforms.ts'],
    env: { BENCH_MODEL_REPLY: options.modelReply, BENCH_SLACK_USERS: String(options.slackUsers) },
    ipc: true,
  });
  const ready = await waitForMessage<FakePlatformUrls & { type: string }>(service, 'ready');
  let nextId = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  let replyListener: ((timing: SlackReplyTiming) => void) | undefined;
  service.child.on(
    'message',
    (message: { type?: string; id?: number; result?: unknown; timing?: SlackReplyTiming }) => {
      if (message.type === 'reply' && message.timing) replyListener?.(message.timing);
      if (message.type !== 'answer' || message.id === undefined) return;
      waiting.get(message.id)?.(message.result);
      waiting.delete(message.id);
    },
  );
  const ask = <T>(command: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, (result) => resolve(result as T));
      service.child.send({ id, command, ...extra }, (error) => {
        if (error) {
          waiting.delete(id);
          reject(error);
        }
      });
    });
  return {
    service,
    slackUrl: ready.slackUrl,
    modelUrl: ready.modelUrl,
    feishuUrl: ready.feishuUrl,
    reset: () => {
      replyListener = undefined;
      return ask('reset');
    },
    configure: (settings) => ask('configure', { settings }),
    watch: (channel, listener) => {
      replyListener = listener;
      return ask('watch', { channel });
    },
    slackReplies: (channel) => ask('slackReplies', { channel }),
    modelTimings: () => ask('modelTimings'),
    counts: () => ask('counts'),
    slackCalls: () => ask('slackCalls'),
    stop: () => service.stop(5_000),
  };
}

/** The reply timings of the channels `prefix0` … `prefix<channels − 1>`, together. */
export async function repliesInChannels(
  fakes: FakePlatforms,
  prefix: string,
  channels: number,
): Promise<SlackReplyTiming[]> {
  const lists = await Promise.all(
    Array.from({ length: channels }, (_, index) => fakes.slackReplies(`${prefix}${index}`)),
  );
  return lists.flat();
}
