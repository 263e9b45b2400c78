import type { ReplyTarget, TurnOutcome, TurnStart } from '../../core/contracts/adapter.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { Logger } from '../../core/contracts/logger.js';
import { markdownToPlainText, truncateText } from '../../core/text/index.js';
import { defuseMarkdown } from './mentions.js';
import { isFeatureUnavailable, replyThreadTs, type SlackCapabilities } from './reply-format.js';
import { errorFields, type SessionStatus, type SlackApi, SlackApiError } from './slack-api.js';

/**
 * Slack's agent sessions (platforms.md "Agent apps"): each thread Butler answers is a session, `processing`
 * while a turn runs (Slack then shows its own stop button, answered by `agent_session_stopped`), `suspended`
 * while an approval waits, `active` once the turn ended. Where Slack refuses sessions (not an agent app, no
 * scope), the workspace is remembered as without them and the working indicators show instead.
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

export function createAgentSessions(dependencies: {
  api: SlackApi;
  capabilities: SlackCapabilities;
  logger: Logger;
}) {
  const { api, capabilities, logger } = dependencies;
  /** Threads whose turn runs now, and whether Slack shows a session for it. */
  const live = new Map<string, Promise<boolean>>();

  function threadOf(target: ReplyTarget): SessionThread | undefined {
    const threadTs = replyThreadTs(target);
    return threadTs ? { channel: target.address.channel, threadTs } : undefined;
  }

  const keyOf = (thread: SessionThread) => `${thread.channel}:${thread.threadTs}`;

  /** Sets the status; false (logged, never thrown) when Slack refused it. */
  async function setStatus(
    thread: SessionThread,
    status: SessionStatus,
    creation: { title?: string; initiatorUserId?: string } = {},
  ): Promise<boolean> {
    try {
      await api.setSessionStatus({ ...thread, status, ...creation });
      return true;
    } catch (error) {
      if (error instanceof SlackApiError && isFeatureUnavailable(error.slackError))
        capabilities.agentSessions = false;
      logger.debug(
        { platform: 'slack', channel: thread.channel, status, ...errorFields(error) },
        'agent session status not set',
      );
      return false;
    }
  }

  return {
    async turnStarted(target: ReplyTarget, start: TurnStart): Promise<void> {
      const thread = threadOf(target);
      if (!thread || !capabilities.agentSessions) return;
      // A top-level DM message opens a thread (and so a session) of its own each time.
      const opensThread = start.firstTurn || target.address.thread === mainThread;
      const title = opensThread && start.text !== undefined ? sessionTitle(start.text) : undefined;
      const shown = setStatus(thread, 'processing', {
        ...(title ? { title } : {}),
        initiatorUserId: start.requester.id,
      });
      live.set(keyOf(thread), shown);
      await shown;
    },

    async turnEnded(target: ReplyTarget, outcome: TurnOutcome): Promise<void> {
      const thread = threadOf(target);
      if (!thread) return;
      const shown = live.get(keyOf(thread));
      live.delete(keyOf(thread));
      if (!(await shown)) return;
      // A parked turn waits for a person's decision; the next turn sets processing again.
      await setStatus(thread, outcome === 'parked' ? 'suspended' : 'active');
    },

    /** Whether a session shows this target's turn at work: then no other working indicator is needed. */
    async covers(target: ReplyTarget): Promise<boolean> {
      const thread = threadOf(target);
      return thread ? ((await live.get(keyOf(thread))) ?? false) : false;
    },
  };
}

export type AgentSessions = ReturnType<typeof createAgentSessions>;
