import { App, type Receiver, type ViewErrorsResponseAction } from '@slack/bolt';
import type { Logger } from '../../core/contracts/logger.js';
import { type AppHomeHandlers, homeActionIds } from './app-home.js';
import { rejectReasonCallbackId } from './approval-blocks.js';
import { openConsoleActionId } from './approval-parts.js';
import { feedbackActionId, feedbackCommentCallbackId } from './feedback-blocks.js';
import type { FeedbackHandlers } from './feedback-handlers.js';
import type { InboundHandlers } from './inbound.js';
import { cardActionIds, showArgumentsActionIds } from './interactions.js';
import type { BotIdentity } from './normalize.js';
import { slackClientOptions } from './slack-api.js';
import { toSlackSdkLogger } from './slack-logger.js';
import type { SuggestedPrompts } from './suggested-prompts.js';

export interface BoltAppOptions {
  receiver: Receiver;
  socketMode: boolean;
  botToken: string;
  apiUrl: string;
  logger: Logger;
  /** From our own auth.test at start: Bolt then needs no auth.test of its own. */
  identity: () => BotIdentity | undefined;
  handlers: InboundHandlers;
  feedback: FeedbackHandlers;
  suggestedPrompts: SuggestedPrompts;
  home: AppHomeHandlers;
}

/**
 * The real Bolt App runs the listeners; Butler's receivers feed it. Listener errors propagate out
 * of `processEvent`, so a receiver can refuse to acknowledge an event the core did not store.
 */
export function createBoltApp(options: BoltAppOptions): App {
  const { handlers } = options;
  const app = new App({
    receiver: options.receiver,
    socketMode: options.socketMode,
    authorize: async () => {
      const identity = options.identity();
      if (!identity) throw new Error('Slack identity unknown: auth.test has not completed');
      return {
        botToken: options.botToken,
        botId: identity.botId,
        botUserId: identity.userId,
        teamId: identity.teamId,
      };
    },
    // normalize.ts decides what Butler ignores, including its own messages.
    ignoreSelf: false,
    deferInitialization: true,
    logger: toSlackSdkLogger(options.logger),
    clientOptions: slackClientOptions({ apiUrl: options.apiUrl, logger: options.logger }),
  });
  app.error(async (error) => {
    throw error;
  });
  app.event('app_mention', async ({ body, event }) => handlers.message(body, event));
  app.event('message', async ({ body, event }) => handlers.message(body, event));
  app.event('agent_session_stopped', async ({ body, event }) => handlers.sessionStopped(body, event));
  app.event('assistant_thread_started', async ({ event }) => options.suggestedPrompts.threadStarted(event));
  app.event('app_context_changed', async ({ event }) => options.suggestedPrompts.contextChanged(event));
  for (const actionId of cardActionIds) {
    app.action(actionId, async ({ body, ack }) => handlers.cardClick(body, () => ack()));
  }
  for (const actionId of showArgumentsActionIds) {
    app.action(actionId, async ({ body, ack }) => handlers.showArguments(body, () => ack()));
  }
  app.event('app_home_opened', async ({ body, event }) => {
    await options.suggestedPrompts.messagesOpened(event);
    await options.home.homeOpened(body, event);
  });
  for (const actionId of homeActionIds) {
    app.action(actionId, async ({ body, ack }) => options.home.homeClick(body, () => ack()));
  }
  app.action(feedbackActionId, async ({ body, ack }) => options.feedback.feedbackClick(body, () => ack()));
  app.view(feedbackCommentCallbackId, async ({ body, ack }) =>
    options.feedback.commentSubmission(body, () => ack()),
  );
  // A URL button opens its link in the browser; Slack still expects the click acknowledged.
  app.action(openConsoleActionId, async ({ ack }) => ack());
  app.view(rejectReasonCallbackId, async ({ body, ack }) =>
    // Bolt types `ack` as a union over view payloads; a submission's ack takes a response action.
    handlers.rejectSubmission(body, ack as (response?: ViewErrorsResponseAction) => Promise<void>),
  );
  return app;
}
