import type { FileConfig } from '../../config/file.js';
import type { ButlerIntake, ChatAdapter } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { PlatformHooks } from '../connector.js';
import { createAgentSessions } from './agent-sessions.js';
import { type AppHomeHandlers, createAppHomeHandlers } from './app-home.js';
import { createFeedbackHandlers, type FeedbackHandlers } from './feedback-handlers.js';
import { createInboundHandlers, type InboundHandlers } from './inbound.js';
import { createInputFormHandlers, type InputFormHandlers } from './input-form-handlers.js';
import { type BotIdentity, installationKeyOfIdentity } from './normalize.js';
import { createSlackAdapter } from './outbound.js';
import { createCapabilities, type ReplyTuning } from './reply-format.js';
import { createSlackApi, type SlackApi } from './slack-api.js';
import { createSuggestedPrompts, type SuggestedPrompts } from './suggested-prompts.js';

/** Pacing and retry knobs; the defaults suit Slack's rate limits, tests shorten them. */
export interface SlackTuning extends ReplyTuning {
  apiTimeoutMs: number;
  apiRetries: number;
  minRetryDelayMs: number;
  /** How long a click waits for its decision to be stored before it is acknowledged anyway. */
  acknowledgeWithinMs: number;
  /** Pace calls to Slack's documented rate tiers; off only against a Slack stand-in (benchmarks of Butler's own work). */
  rateTiers: boolean;
}

/** What every installation's parts share: the core, the config, the process's hooks. */
export interface WorkspaceContext {
  intake: ButlerIntake;
  file: FileConfig;
  logger: Logger;
  apiUrl: string;
  now: () => number;
  tuning: SlackTuning;
  hooks: PlatformHooks;
  /** Conversations offer message search (`message-search.ts`). */
  search: boolean;
}

/**
 * One installation of Butler's Slack app: its bot token's Web API client (paced as that workspace's), who
 * Butler is there, and the listeners and outbound adapter that use them. A workspace's calls never carry
 * another's token: each installation has parts of its own.
 */
export interface SlackWorkspace {
  api: SlackApi;
  identity: () => BotIdentity | undefined;
  adapter: ChatAdapter;
  handlers: InboundHandlers;
  feedback: FeedbackHandlers;
  inputs: InputFormHandlers;
  home: AppHomeHandlers;
  suggestedPrompts: SuggestedPrompts;
  /** Asks Slack who the token is (auth.test) when the installation did not say; returns it. */
  identify(): Promise<BotIdentity>;
}

export function createSlackWorkspace(
  context: WorkspaceContext,
  token: string,
  known?: BotIdentity,
  onTokenRefused?: (slackError: string) => void,
): SlackWorkspace {
  const { intake, logger, tuning, hooks } = context;
  const { shareOf } = hooks;
  const api = createSlackApi({
    token,
    apiUrl: context.apiUrl,
    logger,
    timeoutMs: tuning.apiTimeoutMs,
    retries: tuning.apiRetries,
    minRetryDelayMs: tuning.minRetryDelayMs,
    rateTiers: tuning.rateTiers,
    onCall: hooks.onApiCall,
    onTokenRefused,
    ...(known ? { workspace: known.teamId } : {}),
    ...(shareOf ? { share: (workspace: string) => shareOf(`slack:${workspace}`) } : {}),
  });
  let identity = known;
  const currentIdentity = () => identity;
  const capabilities = createCapabilities();
  const sessions = createAgentSessions({ api, capabilities, logger });
  const acknowledgeWithinMs = tuning.acknowledgeWithinMs;
  return {
    api,
    identity: currentIdentity,
    adapter: createSlackAdapter({
      api,
      logger,
      capabilities,
      sessions,
      tuning,
      identity: currentIdentity,
      now: context.now,
      onDelivered: hooks.onReplyDelivered,
      searchable: context.search,
    }),
    handlers: createInboundHandlers({
      intake,
      api,
      logger,
      identity: currentIdentity,
      answerBots: context.file.answerBots,
      acknowledgeWithinMs,
      stoppedIdle: (thread) => sessions.stoppedIdle(thread),
    }),
    feedback: createFeedbackHandlers({ intake, api, logger, acknowledgeWithinMs }),
    inputs: createInputFormHandlers({ intake, api, logger }),
    suggestedPrompts: createSuggestedPrompts({ api, logger, prompts: context.file.slack.suggestedPrompts }),
    home: createAppHomeHandlers({
      intake,
      api,
      logger,
      acknowledgeWithinMs,
      workspace: () => identity && installationKeyOfIdentity(identity),
    }),
    async identify() {
      identity = await api.authTest();
      return identity;
    },
  };
}
