import type { Logger } from '../../core/contracts/logger.js';
import { isRecord } from './parse.js';
import { errorFields, type SlackApi, type SuggestedPrompt } from './slack-api.js';

/**
 * The prompts Slack's agent container offers (config `slack.suggestedPrompts`), set when someone opens it and
 * again when they move to another channel with it open (`app_context_changed`), then naming that channel. An
 * agent app (`agent_view`) hears the opening as `app_home_opened` with `tab: "messages"`; a legacy
 * `assistant_view` app as `assistant_thread_started` (platforms.md "Checked 2026-11-27"). Pure parsing plus one
 * API call; a failure only loses the suggestions.
 */

const defaultTitle = 'Try asking Butler';

function text(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `assistant_thread_started`: the container's channel, and the channel the person was looking at. */
export function threadStartedPlace(event: unknown): { channel: string; viewing?: string } | undefined {
  const thread = isRecord(event) && isRecord(event.assistant_thread) ? event.assistant_thread : undefined;
  const channel = thread && text(thread, 'channel_id');
  if (!thread || !channel) return undefined;
  const viewing = isRecord(thread.context) ? text(thread.context, 'channel_id') : undefined;
  return viewing ? { channel, viewing } : { channel };
}

/** `app_home_opened` on the Messages tab: the DM with Butler the person opened (an agent app's container). */
export function messagesOpenedPlace(event: unknown): { channel: string } | undefined {
  if (!isRecord(event) || event.tab !== 'messages') return undefined;
  const channel = text(event, 'channel');
  return channel ? { channel } : undefined;
}

/** `app_context_changed`: the container's channel, and the most relevant channel the person now views. */
export function contextChangedPlace(event: unknown): { channel: string; viewing?: string } | undefined {
  if (!isRecord(event)) return undefined;
  const channel = text(event, 'channel');
  if (!channel) return undefined;
  const entities =
    isRecord(event.context) && Array.isArray(event.context.entities) ? event.context.entities : [];
  // Slack orders the entities by relevance.
  const viewed = entities.find(
    (entity) => isRecord(entity) && entity.type === 'slack#/types/channel_id' && text(entity, 'value'),
  );
  const viewing = isRecord(viewed) ? text(viewed, 'value') : undefined;
  return viewing ? { channel, viewing } : { channel };
}

export function createSuggestedPrompts(dependencies: {
  api: SlackApi;
  logger: Logger;
  prompts: readonly SuggestedPrompt[];
}) {
  const { api, logger, prompts } = dependencies;

  async function offer(place: { channel: string; viewing?: string } | undefined): Promise<void> {
    if (!place || prompts.length === 0) return;
    // A DM with Butler is no channel to name.
    const viewing = place.viewing && !place.viewing.startsWith('D') ? place.viewing : undefined;
    const title = viewing ? `Ask Butler about <#${viewing}>` : defaultTitle;
    try {
      await api.setSuggestedPrompts({ channel: place.channel, prompts, title });
    } catch (error) {
      logger.info(
        { platform: 'slack', channel: place.channel, ...errorFields(error) },
        'could not set the suggested prompts',
      );
    }
  }

  return {
    threadStarted: (event: unknown) => offer(threadStartedPlace(event)),
    messagesOpened: (event: unknown) => offer(messagesOpenedPlace(event)),
    contextChanged: (event: unknown) => offer(contextChangedPlace(event)),
  };
}

export type SuggestedPrompts = ReturnType<typeof createSuggestedPrompts>;
