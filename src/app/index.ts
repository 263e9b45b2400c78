import { consoleLink } from '../adapters/admin-console/index.js';
import { createApi } from '../adapters/api/index.js';
import type { PlatformConnector, PlatformHooks } from '../adapters/connector.js';
import { manifestBotScopes } from '../adapters/slack/manifest-scopes.js';
import type { AppConfig } from '../config/index.js';
import { ApprovalService } from '../core/approvals/approval-service.js';
import { createApprovalTools } from '../core/approvals/approval-tools.js';
import { ApprovalNotices } from '../core/approvals/notices.js';
import { BudgetBook } from '../core/budgets/index.js';
import { SecretBox } from '../core/connections/index.js';
import type { ButlerIntake, ChatAdapter } from '../core/contracts/adapter.js';
import { decodeConversationKey } from '../core/contracts/conversation-key.js';
import { ConfigError } from '../core/contracts/errors.js';
import type { Platform } from '../core/contracts/events.js';
import type { Logger } from '../core/contracts/logger.js';
import type { Store } from '../core/contracts/store.js';
import { FeedbackRecorder } from '../core/feedback/index.js';
import { createFiles } from '../core/files/index.js';
import { Admission, defaultAdmission } from '../core/inbox/admission.js';
import { ButlerService } from '../core/inbox/intake.js';
import { Worker } from '../core/inbox/worker.js';
import { InputService, LiveQuestions } from '../core/inputs/index.js';
import { SharedModelSlots } from '../core/model/shared-slots.js';
import { PeopleDirectory } from '../core/people/index.js';
import { firstCovering, profileApprovers } from '../core/profiles/index.js';
import type { ScheduleBook } from '../core/schedules/index.js';
import { MessageGrants } from '../core/search/index.js';
import { TurnStops } from '../core/stop/turn-stops.js';
import { ApprovalPolicy } from '../core/tools/policy.js';
import { TurnRunner } from '../core/turn/turn-runner.js';
import { createMetrics } from '../observability/metrics.js';
import { type OpenDatabase, openDatabase } from '../storage/database.js';
import { createEventBus } from '../storage/event-bus.js';
import { createStore } from '../storage/store.js';
import { createConnections } from './connections.js';
import { startDemo } from './demo.js';
import { createConnectPagesServer, createServer } from './http.js';
import { createAgents, createBrain, ModelClients } from './models.js';
import { createObserver } from './observers.js';
import { PacingShares } from './pacing-shares.js';
import { createProfiles } from './profiles.js';
import { createSchedules } from './schedules.js';
import { searchTools } from './search.js';
import { createTools } from './tools.js';
import { fileOptions, turnOptions, workerOptions } from './turns.js';

/**
 * The composition root: builds every concrete piece from the config and passes it down.
 * `main.ts` (the service) and `chat.ts` (the terminal chat) both start Butler through here.
 */

/** What each platform's integration is lent: metrics and its share of the budgets it paces. */
export type PlatformHooksOf = (platform: 'slack' | 'feishu') => PlatformHooks;

export type ConnectorFactory = (
  intake: ButlerIntake,
  hooksOf?: PlatformHooksOf,
) => Promise<PlatformConnector[]>;

export interface CreateButlerOptions {
  logger: Logger;
  /** Platform integrations to start (Slack, Feishu); see `platform-connectors.ts`. */
  connectors?: ConnectorFactory;
  /** Adapters that live in this process without HTTP routes (the terminal chat). */
  adapters?: ChatAdapter[];
  /**
   * Listen for HTTP: everything (the service), or only the pages people connect accounts with, on loopback, when
   * a server wants OAuth (the terminal chat: its Connect links must lead somewhere).
   */
  listen?: boolean | 'connect-pages';
  /** Overrides the configured PGlite directory (tests use `memory://`). */
  dataDir?: string;
}

export interface Butler {
  readonly config: AppConfig;
  readonly service: ButlerService;
  readonly worker: Worker;
  readonly store: Store;
  /** Scheduled tasks: made, listed and cancelled through here (the API, the console, tests). */
  readonly schedules: ScheduleBook;
  readonly database: OpenDatabase;
  readonly connectors: readonly PlatformConnector[];
  /** Tools offered now, with their risk, for the start-up banner. */
  toolNames(): string[];
  /** Demo mode (`BUTLER_MODEL=demo`): the scripted model answers; `approver` when Butler made `demo-approver`. */
  readonly demo: { approver: boolean } | undefined;
  /** Each MCP server's state in words (banner, /readyz). */
  mcpStatus(): Record<string, string>;
  /** MCP tools that run without an approval card (low risk by annotation or override), for the banner. */
  mcpToolsWithoutCard(): string[];
  /** The HTTP port actually bound (0 until started, or when not listening). */
  port: number;
  start(): Promise<void>;
  /** Graceful: stop intake, let running turns finish until the deadline, flush traces, close the database. */
  stop(deadlineMs?: number): Promise<void>;
}

export async function createButler(configured: AppConfig, options: CreateButlerOptions): Promise<Butler> {
  const { logger } = options;
  const demo = await startDemo(configured, logger);
  const config = demo?.config ?? configured;
  const { file } = config;
  const database = await openDatabase({
    url: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    dataDir: options.dataDir ?? config.dataDir,
    logger,
  });
  const store = createStore(database.db);
  // An embedded database belongs to this process alone (lockfile): leases left by a crash are stale.
  if (database.kind === 'pglite') await store.inbox.releaseAllLeases();

  // Only GET /api/v1/events listens: without API keys, turns publish nothing (no NOTIFY per turn). Processes
  // sharing a database share their config, so each one that serves the stream also feeds it.
  const bus = config.apiKeys.length > 0 ? createEventBus(database, logger) : undefined;
  const people = new PeopleDirectory(file.people);
  const policy = new ApprovalPolicy(file.approvers, people, profileApprovers(config.channels));
  const adapters = new Map<Platform, ChatAdapter>();
  const schedules = createSchedules(config, store, policy, adapters, logger);
  const connections = createConnections(config, store, people, logger);
  const { tools, mcp, toolProblems } = createTools(
    config,
    store,
    people,
    logger,
    [
      ...schedules.tools,
      ...createApprovalTools(store.reads, policy, file.schedules.defaultTimezone),
      ...(connections?.tools ?? []),
      ...(demo?.tools ?? []),
      ...searchTools(config, people, connections?.book),
    ],
    connections?.sources,
    connections?.book,
  );
  // Served on the service's HTTP port; the terminal chat has none.
  const metrics =
    options.listen && file.metrics.enabled
      ? createMetrics({
          store,
          logger,
          mcpServers: () =>
            mcp.servers.map((server) => ({
              name: server.name,
              connected: server.status().state === 'connected',
            })),
        })
      : undefined;
  const observer = await createObserver(config, bus, metrics, logger);
  const { maxConcurrent } = file.model;
  const slots = maxConcurrent
    ? new SharedModelSlots(store.modelSlots, { cap: maxConcurrent }, logger)
    : undefined;
  const clients = new ModelClients(config, slots);
  const model = config.model ? clients.client(config.model) : undefined;
  const brain = createBrain(config, clients, store, logger);
  const { delegator, router } = createAgents(config, clients, model, tools, store);
  const profiles =
    config.channels.length > 0
      ? createProfiles(config, clients, store, tools, {
          model,
          tools,
          ...(delegator ? { delegator } : {}),
          ...(router ? { router } : {}),
        })
      : undefined;

  let worker: Worker | undefined;
  const wake = () => worker?.wake();
  const approvals = new ApprovalService(store, policy, observer, logger, wake, {
    standingApprovalHours: file.standingApprovalHours,
    // A decision taken over the API shows on the card where the request was asked.
    showDecision: async (batch, card) => {
      const [first] = batch;
      if (!first?.cardMessageId) return;
      const address = decodeConversationKey(first.conversationKey);
      await adapters.get(address.platform)?.updateApprovalCard(address, first.cardMessageId, card);
    },
    answersOn: (platform) => adapters.has(platform),
    showOnNotice: async (notice, card) => {
      const address = decodeConversationKey(notice.conversationKey);
      await adapters.get(address.platform)?.updateApprovalCard(address, notice.messageId, card);
    },
    quorum: file.approvalPolicy.quorum,
    onExpiry: file.approvalPolicy.onExpiry,
    ...(config.publicUrl ? { requestLink: consoleLink(config.publicUrl) } : {}),
  });
  const fileLimits = fileOptions(config);
  // Slack's action tokens come with messages: sealed before the inbox stores them, opened by their turn.
  const grants =
    config.search.slack && config.secretKeys
      ? new MessageGrants(new SecretBox(config.secretKeys))
      : undefined;
  const files = createFiles(store, fileLimits, logger);
  const stops = new TurnStops(store, logger);
  // Turns start while deliveries store quickly: the intake reports, the worker reads.
  const admission = new Admission(defaultAdmission);
  // Calls of 2025 sessions wait here for their person's answer, which any process may take.
  const live = new LiveQuestions(store);
  const inputs = new InputService(store, people, logger, observer, live);
  const service = new ButlerService(store, approvals, file.access, people, logger, wake, {
    admission,
    inputs,
    maxMessageChars: file.maxMessageChars,
    messagesPerMinute: file.rateLimit.messagesPerMinute,
    ...(grants ? { grants } : {}),
    files: files.intake,
    stops,
    feedback: new FeedbackRecorder(store, observer, logger),
    capabilities: () => ({
      tools: tools.all().map((tool) => ({ name: tool.name, risk: tool.risk })),
      agents: file.agents.map((agent) => ({ name: agent.name, description: agent.description })),
    }),
  });

  const budgets = file.budgets.length > 0 ? new BudgetBook(file.budgets, store, people, logger) : undefined;
  const shares = new PacingShares(database, logger);
  const hooksOf: PlatformHooksOf = (platform) => ({
    ...(metrics
      ? {
          onApiCall: (method, outcome) => metrics.platformCall(platform, method, outcome),
          onReplyDelivered: (way) => metrics.replyDelivered(platform, way),
        }
      : {}),
    shareOf: (budget) => shares.shareOf(budget),
    installations: store.installations,
    feishu: { tenants: store.feishuTenants, secrets: store.feishuSecrets },
  });
  const connectors = (await options.connectors?.(service, hooksOf)) ?? [];
  const api =
    config.apiKeys.length > 0
      ? createApi({
          keys: config.apiKeys,
          intake: service,
          store,
          bus,
          logger,
          streams: file.api.streams,
          uploads: fileLimits,
          schedules: { book: schedules.book, answersOn: (platform) => adapters.has(platform) },
          profileOf: (address) => firstCovering(config.channels, address)?.name,
          ...(budgets ? { budgets: () => budgets.standing() } : {}),
          ...(connections ? { connections: connections.book } : {}),
          installations: { expectedScopes: manifestBotScopes },
        })
      : undefined;
  for (const adapter of [
    ...connectors.map((connector) => connector.adapter),
    ...(options.adapters ?? []),
    ...(api ? [api.adapter] : []),
  ]) {
    adapters.set(adapter.platform, adapter);
  }
  const runner = new TurnRunner({
    store,
    brain,
    model,
    tools,
    policy,
    approvals,
    adapters,
    observer,
    logger,
    ...(delegator ? { delegator } : {}),
    ...(router ? { router } : {}),
    ...(profiles ? { profiles } : {}),
    files,
    stops,
    ...(budgets ? { budgets } : {}),
    ...(connections ? { connections: connections.book } : {}),
    ...(grants ? { grants } : {}),
    live,
    options: turnOptions(config),
  });
  const { approvalPolicy } = file;
  const { remindAfter } = approvalPolicy;
  const notices = new ApprovalNotices(
    store,
    approvals,
    policy,
    adapters,
    {
      remindAfterMs: approvalPolicy.remindAfter,
      escalateAfterMs: approvalPolicy.escalateAfter,
      escalateTo: approvalPolicy.escalateTo,
    },
    logger,
    wake,
  );
  worker = new Worker(store, runner, approvals, adapters, { ...workerOptions(config), admission }, logger, {
    scheduled: schedules.book,
    isAllowed: (message) => service.isAllowed(message),
    notices,
    queueNotices: () => notices.queueDue(),
    ...(connections ? { expireConnectionWaits: () => connections.book.expireWaits() } : {}),
    expireInputWaits: () => inputs.expireDue(),
    lapseInputWaits: () => runner.chores.lapseOrphanQuestions(),
    // Questions wait on people as approvals do: reminded after the same while.
    ...(remindAfter === undefined
      ? {}
      : { remindInputs: () => runner.chores.remindInputs(new Date(Date.now() - remindAfter)) }),
  });
  const scheduler = schedules.scheduler(wake);

  let started = false;
  const http =
    options.listen === 'connect-pages'
      ? connections && createConnectPagesServer(config, connections, logger)
      : options.listen
        ? createServer(config, {
            logger,
            connectors,
            api,
            database,
            mcp,
            connections,
            metrics,
            workerState: () => (started ? 'ok' : 'starting'),
          })
        : undefined;

  const butler: Butler = {
    config,
    service,
    worker,
    store,
    schedules: schedules.book,
    database,
    connectors,
    demo: demo && { approver: demo.approver },
    toolNames: () =>
      tools.all().map((tool) => (tool.risk === 'low' ? tool.name : `${tool.name} (${tool.risk} risk)`)),
    mcpStatus: () => ({ ...mcp.describe(), ...connections?.describe() }),
    mcpToolsWithoutCard: () =>
      [...mcp.tools(), ...(connections?.sources.flatMap((source) => source.tools()) ?? [])]
        .filter((tool) => tool.risk === 'low')
        .map((tool) => tool.name),
    port: 0,
    async start() {
      if (http) butler.port = await http.listen();
      const connecting = [
        ...mcp.servers.map((server) => `MCP server ${server.name}`),
        ...connectors.map((connector) => connector.adapter.platform),
      ];
      if (connecting.length > 0) logger.info({ connecting }, `connecting: ${connecting.join(', ')}`);
      await Promise.all([
        mcp.start(),
        connections?.start(),
        ...connectors.map((connector) => connector.start()),
      ]);
      const problems = toolProblems();
      if (problems.length > 0) {
        await Promise.all([mcp.stop(), connections?.stop(), http?.close()]);
        throw new ConfigError(problems);
      }
      await schedules.syncConfig();
      shares.start();
      worker?.start();
      scheduler.start();
      started = true;
    },
    async stop(deadlineMs = 10_000) {
      // Calls waiting for a person's answer end now, told cancel, so their turns finish before the worker stops.
      live.close();
      api?.close();
      await http?.close();
      await Promise.all(
        connectors.map((connector) =>
          connector.stop().catch((error: unknown) => logger.warn({ err: error }, 'connector stop failed')),
        ),
      );
      await scheduler.stop();
      await worker?.stop(deadlineMs);
      await shares.stop();
      stops.close();
      await Promise.all([mcp.stop(), connections?.stop()]);
      slots?.stop();
      await observer.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'trace flush failed'));
      await bus?.close();
      await database.close();
      await demo?.close();
    },
  };
  return butler;
}
