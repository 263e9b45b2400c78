/**
 * Slack's agent methods for the fake Slack (fake-slack-api.ts), strict to their documented arguments
 * (docs.slack.dev agents.sessions.setStatus, agents.sessions.rename, assistant.threads.setSuggestedPrompts;
 * @slack/web-api 8.2 request types):
 * - agents.sessions.setStatus: `status` one of processing|active|suspended|closed; `channel_id` and
 *   `thread_ts` (a thread-based session in a channel or DM); `title` at most 200 characters. It creates the
 *   session; on an existing one `title` and `initiator_user_id` are ignored, as Slack says.
 * - agents.sessions.rename: `channel_id`, `thread_ts` and a `title` of 1 to 200 characters, on a session.
 * - chat.stopStream's `session_status` moves the thread's session, when it has one; a stop without it leaves the
 *   session as it was (no default is documented).
 * - assistant.threads.setSuggestedPrompts: `channel_id` and 1 to 4 prompts, each a `title` and a `message`. An
 *   agent app's call with `thread_ts` "will silently fail": answered ok, nothing set.
 * With `available` false the workspace has no agent features: every call answers `unavailableError`.
 */

type Answer = Record<string, unknown>;

export type FakeSessionStatus = 'processing' | 'active' | 'suspended' | 'closed';
const statuses: readonly string[] = ['processing', 'active', 'suspended', 'closed'];
const titleLimit = 200;

export interface FakeSession {
  channel: string;
  threadTs: string;
  title: string | undefined;
  initiator: string | undefined;
  /** Every status set, in order (the first created the session). */
  statuses: FakeSessionStatus[];
}

export interface FakeSuggestedPrompts {
  title: string | undefined;
  prompts: Array<{ title: string; message: string }>;
}

export interface FakeSlackAgents {
  /** Whether the app is an agent in a workspace with the feature (off: a plain bot, as most tests want). */
  available: boolean;
  /** What Slack answers when the feature is not there. */
  unavailableError: string;
  /** Sessions by `channel:thread_ts`. */
  sessions: Map<string, FakeSession>;
  /** The statuses of a thread's session, in order; empty when there is none. */
  statusesOf(channel: string, threadTs: string): FakeSessionStatus[];
  /** The prompts last set in each channel (an agent's container). */
  suggestedPrompts: Map<string, FakeSuggestedPrompts>;
}

export interface FakeSlackAgentsRoom {
  agents: FakeSlackAgents;
  methods: Record<string, (args: Record<string, unknown>) => Answer>;
  /**
   * chat.stopStream's `session_status`: applied to the thread's session when there is one. The method page
   * documents no default (slack-api-ref's docs.slack.dev copy lists no `session_status` at all), so a stop without
   * it changes nothing here: the app must say what the session becomes. An answer when the value is not a status.
   */
  streamStopped(
    channel: string,
    threadTs: string | undefined,
    args: Record<string, unknown>,
  ): Answer | undefined;
  reset(): void;
}

function str(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const fail = (error: string): Answer => ({ ok: false, error });

function validPrompts(value: unknown): FakeSuggestedPrompts['prompts'] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > 4) return undefined;
  const prompts = value.filter(
    (prompt): prompt is { title: string; message: string } =>
      typeof prompt?.title === 'string' &&
      prompt.title.length > 0 &&
      typeof prompt?.message === 'string' &&
      prompt.message.length > 0,
  );
  return prompts.length === value.length
    ? prompts.map(({ title, message }) => ({ title, message }))
    : undefined;
}

export function createFakeSlackAgents(): FakeSlackAgentsRoom {
  const agents: FakeSlackAgents = {
    available: false,
    unavailableError: 'not_allowed',
    sessions: new Map(),
    suggestedPrompts: new Map(),
    statusesOf: (channel, threadTs) => agents.sessions.get(`${channel}:${threadTs}`)?.statuses ?? [],
  };

  /** The feature and the thread-based session's place, or why the call is refused. */
  function sessionPlace(
    args: Record<string, unknown>,
  ): { key: string; channel: string; threadTs: string } | { refused: Answer } {
    if (!agents.available) return { refused: fail(agents.unavailableError) };
    const channel = str(args, 'channel_id');
    const threadTs = str(args, 'thread_ts');
    if (!channel) return { refused: fail('channel_not_found') };
    if (!threadTs) return { refused: fail('invalid_arguments') };
    return { key: `${channel}:${threadTs}`, channel, threadTs };
  }

  const methods: FakeSlackAgentsRoom['methods'] = {
    'agents.sessions.setStatus': (args) => {
      const place = sessionPlace(args);
      if ('refused' in place) return place.refused;
      const status = str(args, 'status') ?? '';
      const title = str(args, 'title');
      if (!statuses.includes(status)) return fail('invalid_arguments');
      if (title && title.length > titleLimit) return fail('invalid_arguments');
      const existing = agents.sessions.get(place.key);
      const session: FakeSession = existing ?? {
        channel: place.channel,
        threadTs: place.threadTs,
        title,
        initiator: str(args, 'initiator_user_id'),
        statuses: [],
      };
      session.statuses.push(status as FakeSessionStatus);
      agents.sessions.set(place.key, session);
      return { ok: true, status, ...(session.title ? { title: session.title } : {}) };
    },
    'agents.sessions.rename': (args) => {
      const place = sessionPlace(args);
      if ('refused' in place) return place.refused;
      const title = str(args, 'title');
      if (!title || title.length > titleLimit) return fail('invalid_arguments');
      const session = agents.sessions.get(place.key);
      if (!session) return fail('session_not_found');
      session.title = title;
      return { ok: true };
    },
    'assistant.threads.setSuggestedPrompts': (args) => {
      if (!agents.available) return fail(agents.unavailableError);
      const channel = str(args, 'channel_id');
      if (!channel) return fail('channel_not_found');
      const prompts = validPrompts(args.prompts);
      if (!prompts) return fail('invalid_arguments');
      // "Including it in a call for an agent app will cause the call to silently fail."
      if (args.thread_ts !== undefined) return { ok: true };
      agents.suggestedPrompts.set(channel, { title: str(args, 'title'), prompts });
      return { ok: true };
    },
  };

  return {
    agents,
    methods,
    streamStopped(channel, threadTs, args) {
      const status = args.session_status;
      if (status === undefined) return undefined;
      if (typeof status !== 'string' || !statuses.includes(status)) return fail('invalid_arguments');
      const session = threadTs ? agents.sessions.get(`${channel}:${threadTs}`) : undefined;
      if (agents.available && session) session.statuses.push(status as FakeSessionStatus);
      return undefined;
    },
    reset() {
      agents.available = false;
      agents.unavailableError = 'not_allowed';
      agents.sessions.clear();
      agents.suggestedPrompts.clear();
    },
  };
}
