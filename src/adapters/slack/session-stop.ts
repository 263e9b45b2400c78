import type { ConversationAddress } from '../../core/contracts/events.js';
import { workspaceOf } from './normalize.js';
import { isRecord } from './parse.js';

/**
 * Slack's agent stop button: while an agent session is `processing`, Slack shows a stop button in the thread,
 * and a click sends `agent_session_stopped {channel, thread_ts, streaming_message_ts[], user, event_ts}`
 * (docs.slack.dev/ai/agent-sessions). Butler stops the turn answering in that thread.
 */
export function sessionStopOf(
  body: unknown,
  event: unknown,
): { address: ConversationAddress; userId: string; isDirect: boolean } | undefined {
  if (!isRecord(body) || !isRecord(event)) return undefined;
  const { channel, thread_ts: threadTs, user } = event;
  const workspace = workspaceOf(body, event);
  if (typeof channel !== 'string' || typeof threadTs !== 'string' || typeof user !== 'string')
    return undefined;
  if (!workspace) return undefined;
  return {
    address: { platform: 'slack', workspace, channel, thread: threadTs },
    userId: user,
    // Direct-message channel ids start with D: the allowlists' channel rules do not apply there.
    isDirect: channel.startsWith('D'),
  };
}
