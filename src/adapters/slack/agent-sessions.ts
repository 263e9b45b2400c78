import type { ReplyTarget, TurnOutcome, TurnStart } from '../../core/contracts/adapter.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { Logger } from '../../core/contracts/logger.js';
import { markdownToPlainText, truncateText } from '../../core/text/index.js';
import { defuseMarkdown } from './mentions.js';
import { isFeatureUnavailable, replyThreadTs, type SlackCapabilities } from './reply-format.js';
import type { SessionStatus, SlackApi } from './slack-api.js';

/**
 * Slack's agent sessions (platforms.md "Agent apps"): each thread Butler answers is a session, `processing`
 * while a turn runs (Slack then shows its own stop button, answered by `agent_session_stopped`), `suspended`
 * while an approval or a person's answer waits, `active` once the turn ended. Where Slack refuses sessions (not an agent app, no
 * scope, the feature off), the workspace is remembered as without them and the working indicators show instead.
 *
 * A status is cosmetic: it never holds up a turn. Statuses are coalesced per thread (cosmetic-calls.ts); one
 * that cannot be sent within the workspace's Tier 3 budget is dropped, and a `processing` never shown is not
 * followed by an `active` for it. A reply's last `chat.stopStream` carries `session_status: active`, so a turn
 * that ends with a streamed reply needs no call of its own for it. (Slack's guide says a stop moves the session
 * out of `processing`, but the method page documents neither the argument's default nor that a stop without
 * it does: it is sent every time.)
 */

/** Slack's limit for a session title. */
const titleLimit = 200;

/** A session title from what the person wrote: one plain line that pings nobody, at most 200 characters. */
export function sessionTitle(text: string): string | undefined {
  const line = defuseMarkdown(markdownToPlainText(text));
  return line ? truncateText(line, titleLimit) : undefined;
}

interface SessionThread {
  channel: string;
  threadTs: string;
}

/** What a stream's stop tells the session, and what the reply tells the sessions once it stopped. */
export interface SessionFold {
  /**
   * `session_status` for a stop now: `processing` while the turn goes on past this message, `active` on its last;
   * none where no session is shown (or a status call is on its way).
   */
  statusForStop(final: boolean): SessionStatus | undefined;
  /** The stop was made with `status` (undefined: none was sent, and the session is as it was). */
  stopped(status: SessionStatus | undefined): void;
}

export function createAgentSessions(dependencies: {
  api: SlackApi;
  capabilities: SlackCapabilities;
  logger: Logger;
}) {
  const { api, capabilities, logger } = dependencies;
  const board = api.cosmetic<SessionStatus>({
    // A session is made only by `processing`: a `processing` that never reached Slack (dropped, or still
    // waiting) is not followed by another status for it.
    unneeded: (shown, next) => shown === next || (shown === undefined && next !== 'processing'),
    onRefused: (error) => {
      if (!isFeatureUnavailable(error.slackError)) return;
      if (capabilities.agentSessions)
        logger.info({ platform: 'slack', slackError: error.slackError }, 'Slack has no agent sessions here');
      capabilities.agentSessions = false;
    },
  });
  /** Settles once Slack answered this process's first session call: whether the workspace has sessions. */
  let probe: Promise<void> | undefined;

  function threadOf(target: ReplyTarget): SessionThread | undefined {
    const threadTs = replyThreadTs(target);
    return threadTs ? { channel: target.address.channel, threadTs } : undefined;
  }

  const keyOf = (thread: SessionThread) => `${thread.channel}:${thread.threadTs}`;

  function setStatus(
    thread: SessionThread,
    status: SessionStatus,
    creation: { title?: string; initiatorUserId?: string } = {},
  ): Promise<void> {
    const args = {
      channel_id: thread.channel,
      thread_ts: thread.threadTs,
      status,
      title: creation.title,
      initiator_user_id: creation.initiatorUserId,
    };
    const sent = board.set(keyOf(thread), status, 'agents.sessions.setStatus', args);
    probe ??= sent;
    return sent;
  }

  return {
    /** Never waits for Slack: the promise settles once the status was sent or dropped (tests, shutdown). */
    turnStarted(target: ReplyTarget, start: TurnStart): Promise<void> {
      const thread = threadOf(target);
      if (!thread || !capabilities.agentSessions) return Promise.resolve();
      // A top-level DM message opens a thread (and so a session) of its own each time.
      const opensThread = start.firstTurn || target.address.thread === mainThread;
      const title = opensThread && start.text !== undefined ? sessionTitle(start.text) : undefined;
      // Only a Slack user can be a session's initiator (a task an API key made has none here).
      const fromSlack = start.requester.platform === undefined || start.requester.platform === 'slack';
      return setStatus(thread, 'processing', {
        ...(title ? { title } : {}),
        ...(fromSlack ? { initiatorUserId: start.requester.id } : {}),
      });
    },

    turnEnded(target: ReplyTarget, outcome: TurnOutcome): Promise<void> {
      const thread = threadOf(target);
      if (!thread || !capabilities.agentSessions) return Promise.resolve();
      // A parked turn waits for a person's decision; the next turn sets processing again.
      return setStatus(thread, outcome === 'parked' ? 'suspended' : 'active');
    },

    /** The turn waits for a person mid-turn (a server's question), and then goes on. */
    turnWaiting(target: ReplyTarget, waiting: boolean): Promise<void> {
      const thread = threadOf(target);
      if (!thread || !capabilities.agentSessions) return Promise.resolve();
      return setStatus(thread, waiting ? 'suspended' : 'processing');
    },

    /**
     * A stop pressed when nothing runs here (the turn ended, or Butler restarted since): the session is moved out
     * of `processing` all the same, as Slack leaves that to the app (platforms.md "agent_session_stopped").
     */
    stoppedIdle(thread: SessionThread): Promise<void> {
      if (!capabilities.agentSessions) return Promise.resolve();
      // Slack showed its stop button, so the session is `processing` there, whatever this process remembers.
      const key = keyOf(thread);
      if (board.state(key).shown === undefined) board.assume(key, 'processing');
      return setStatus(thread, 'active');
    },

    /** The fold of a reply's stream stops into the session's status, for the reply to `target`. */
    foldFor(target: ReplyTarget): SessionFold | undefined {
      const thread = threadOf(target);
      if (!thread) return undefined;
      const key = keyOf(thread);
      return {
        statusForStop(final) {
          const { shown, sending } = board.state(key);
          if (!capabilities.agentSessions || shown === undefined || sending !== undefined) return undefined;
          if (!final) return shown === 'processing' ? 'processing' : undefined;
          return 'active';
        },
        stopped(status) {
          const { shown, sending } = board.state(key);
          if (status && shown !== undefined && sending === undefined) board.assume(key, status);
        },
      };
    },

    /** Whether a session shows this target's turn at work: then no other working indicator is needed. */
    async covers(target: ReplyTarget): Promise<boolean> {
      const thread = threadOf(target);
      if (!thread || !capabilities.agentSessions) return false;
      const { shown, pending, sending } = board.state(keyOf(thread));
      if (shown === undefined && pending === undefined && sending === undefined) return false;
      // Until Slack answered a first session call, whether it has sessions is not known.
      await probe;
      return capabilities.agentSessions;
    },
  };
}

export type AgentSessions = ReturnType<typeof createAgentSessions>;
