import { App, type Receiver, type ViewErrorsResponseAction } from '@slack/bolt';
import type { Logger } from '../../core/contracts/logger.js';
import { homeActionIds } from './app-home.js';
import { rejectReasonCallbackId } from './approval-blocks.js';
import { openConsoleActionId } from './approval-parts.js';
import { feedbackActionId, feedbackCommentCallbackId } from './feedback-blocks.js';
import { inputActionIds, inputFormCallbackId } from './input-form-blocks.js';
import { cardActionIds, showArgumentsActionIds } from './interactions.js';
import { slackClientOptions } from './slack-api.js';
import { toSlackSdkLogger } from './slack-logger.js';
import type { SlackWorkspace } from './workspace.js';

export interface BoltAppOptions {
  receiver: Receiver;
  socketMode: boolean;
  apiUrl: string;
  logger: Logger;
  /** The installation a payload is for (its token, identity and listeners); throws for one Butler does not serve. */
  workspaceOf: (body: unknown) => Promise<SlackWorkspace>;
  /** `app_uninstalled` or `tokens_revoked` (Bolt runs these without authorize). */
  uninstalled: (body: unknown, event: unknown) => Promise<void>;
}

/**
 * The real Bolt App runs the listeners; Butler's receivers feed it. Each payload goes to the listeners of its
 * own installation. Listener errors propagate out of `processEvent`, so a receiver can refuse to acknowledge an
 * event the core did not store.
 */
export function createBoltApp(options: BoltAppOptions): App {
  const { workspaceOf } = options;
  const app = new App({
    receiver: options.receiver,
    socketMode: options.socketMode,
    // Bolt's client goes unused (each installation has its own Web API client): no token is handed out here.
    authorize: async (_source, body) => {
      const identity = (await workspaceOf(body)).identity();
      if (!identity) throw new Error('Slack identity unknown: auth.test has not completed');
      return { botId: identity.botId, botUserId: identity.userId, teamId: identity.teamId };
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
  const on = async (body: unknown) => workspaceOf(body);
  app.event('app_mention', async ({ body, event }) => (await on(body)).handlers.message(body, event));
  app.event('message', async ({ body, event }) => (await on(body)).handlers.message(body, event));
  app.event('agent_session_stopped', async ({ body, event }) =>
    (await on(body)).handlers.sessionStopped(body, event),
  );
  app.event('assistant_thread_started', async ({ body, event }) =>
    (await on(body)).suggestedPrompts.threadStarted(event),
  );
  app.event('app_context_changed', async ({ body, event }) =>
    (await on(body)).suggestedPrompts.contextChanged(event),
  );
  app.event('app_uninstalled', async ({ body, event }) => options.uninstalled(body, event));
  app.event('tokens_revoked', async ({ body, event }) => options.uninstalled(body, event));
  for (const actionId of cardActionIds) {
    app.action(actionId, async ({ body, ack }) => (await on(body)).handlers.cardClick(body, () => ack()));
  }
  for (const actionId of showArgumentsActionIds) {
    app.action(actionId, async ({ body, ack }) => (await on(body)).handlers.showArguments(body, () => ack()));
  }
  app.event('app_home_opened', async ({ body, event }) => {
    const workspace = await on(body);
    await workspace.suggestedPrompts.messagesOpened(event);
    await workspace.home.homeOpened(body, event);
  });
  for (const actionId of homeActionIds) {
    app.action(actionId, async ({ body, ack }) => (await on(body)).home.homeClick(body, () => ack()));
  }
  app.action(feedbackActionId, async ({ body, ack }) =>
    (await on(body)).feedback.feedbackClick(body, () => ack()),
  );
  app.view(feedbackCommentCallbackId, async ({ body, ack }) =>
    (await on(body)).feedback.commentSubmission(body, () => ack()),
  );
  for (const actionId of Object.values(inputActionIds)) {
    app.action(actionId, async ({ body, ack }) => (await on(body)).inputs.inputClick(body, () => ack()));
  }
  app.view(inputFormCallbackId, async ({ body, ack }) =>
    (await on(body)).inputs.formSubmission(
      body,
      ack as (response?: ViewErrorsResponseAction) => Promise<void>,
    ),
  );
  // A URL button opens its link in the browser; Slack still expects the click acknowledged.
  app.action(openConsoleActionId, async ({ ack }) => ack());
  app.view(rejectReasonCallbackId, async ({ body, ack }) =>
    // Bolt types `ack` as a union over view payloads; a submission's ack takes a response action.
    (await on(body)).handlers.rejectSubmission(
      body,
      ack as (response?: ViewErrorsResponseAction) => Promise<void>,
    ),
  );
  return app;
}
