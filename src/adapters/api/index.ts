import type { ApiKey } from '../../config/api-keys.js';
import { defaultStreamLimits, type StreamLimits } from '../../config/api-streams.js';
import type { LimitState } from '../../core/budgets/index.js';
import type { ConnectionBook } from '../../core/connections/index.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { EventBus } from '../../core/contracts/event-bus.js';
import type { ConversationAddress, Platform } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { Store } from '../../core/contracts/store.js';
import type { ScheduleBook } from '../../core/schedules/index.js';
import { type RouteHandler, sendJson } from '../../http/server.js';
import { adminRoutes } from './admin-routes.js';
import { createApiAdapter } from './api-adapter.js';
import { keyChecker } from './auth.js';
import { connectionRoutes } from './connection-routes.js';
import { ConversationFeed } from './conversation-feed.js';
import { conversationRoutes } from './conversation-routes.js';
import type { WatchTiming } from './conversation-watch.js';
import { feedbackRoutes } from './feedback-routes.js';
import { fileRoutes } from './file-routes.js';
import { inputRoutes } from './input-routes.js';
import { installationRoutes } from './installation-routes.js';
import { withLiveLinks } from './live-links.js';
import type { UploadLimits } from './message-body.js';
import { openApiDocument } from './openapi.js';
import { dispatcher } from './routes.js';
import { scheduleRoutes } from './schedule-routes.js';
import type { SseStream } from './sse.js';
import { StreamSlots } from './stream-slots.js';

/**
 * The HTTP API (`/api/v1`): a third channel beside Slack and Feishu (platform `api`) for other systems, and
 * the read side admins use. Same durable core, same approvals; API keys from the config file.
 */

export const apiPrefix = '/api/v1';

export interface ApiOptions {
  keys: readonly ApiKey[];
  intake: ButlerIntake;
  store: Store;
  bus: EventBus | undefined;
  logger: Logger;
  /** Open streams per key and in all, and how long a quiet one lasts (`api.streams` in the config file). */
  streams?: StreamLimits;
  /** What the files of one message may be (`files:` in the config file). */
  uploads: UploadLimits;
  /** Scheduled tasks (`/schedules`), and whether Butler answers on a platform (tasks in other channels). */
  schedules: { book: ScheduleBook; answersOn: (platform: Platform) => boolean };
  /** The channel profile a conversation uses, for the read endpoints. */
  profileOf?: (address: ConversationAddress) => string | undefined;
  /** Where each configured budget stands now (`/budgets`). */
  budgets?: () => Promise<readonly LimitState[]>;
  /** People's connections to OAuth servers (`/connections`); absent when no server wants OAuth. */
  connections?: ConnectionBook;
  /** Slack installs over OAuth (`/installations`, empty without them): the bot scopes an install should grant. */
  installations: { expectedScopes: readonly string[] };
}

/**
 * While a conversation is busy its log is read every 250 ms (another process may be writing its turn); a quiet
 * one every 2 s, since the bus wakes it when a turn starts anywhere.
 */
const timing: WatchTiming = { pollMs: 250, quietPollMs: 2000, busyWindowMs: 10_000, pageSize: 200 };

/** A live-events client whose socket stays full this long is dropped. */
const slowConsumerMs = 5_000;

export function createApi(options: ApiOptions) {
  const { store, logger } = options;
  const streams = new Set<SseStream>();
  const limits = options.streams ?? defaultStreamLimits;
  const slots = new StreamSlots(limits);
  const { connections } = options;
  const events = connections
    ? withLiveLinks(store.conversationEvents, (id) => connections.liveLink(id))
    : store.conversationEvents;
  const feed = new ConversationFeed(events, timing, options.bus, logger);
  // A relative server URL: the document holds wherever it is served from (and no Host header ends up in it).
  const openApi: RouteHandler = (_request, response) => sendJson(response, 200, openApiDocument(apiPrefix));
  const handler = dispatcher({
    prefix: apiPrefix,
    authenticate: keyChecker(options.keys),
    open: new Map([['/openapi.json', openApi]]),
    logger,
    routes: [
      ...conversationRoutes({
        intake: options.intake,
        feed,
        logger,
        idleMs: limits.idleSeconds * 1000,
        streams,
        slots,
        uploads: options.uploads,
      }),
      ...fileRoutes(store),
      ...feedbackRoutes({ intake: options.intake, store }),
      ...inputRoutes({ intake: options.intake }),
      ...scheduleRoutes({ ...options.schedules, store }),
      ...connectionRoutes(connections),
      ...installationRoutes(store, options.installations.expectedScopes),
      ...adminRoutes({
        intake: options.intake,
        store,
        bus: options.bus,
        slowConsumerMs,
        streams,
        slots,
        ...(options.profileOf ? { profileOf: options.profileOf } : {}),
        ...(options.budgets ? { budgets: options.budgets } : {}),
      }),
    ],
  });
  return {
    adapter: createApiAdapter(feed, logger, apiPrefix),
    prefixRoutes: new Map([[`${apiPrefix}/`, handler]]),
    /** Ends the open streams (clients reconnect with Last-Event-ID to another process or after the restart). */
    close() {
      feed.close();
      for (const stream of [...streams]) stream.end();
    },
  };
}
