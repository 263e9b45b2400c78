import { createApi } from './adapters/api/index.js';
import type { PlatformConnector } from './adapters/connector.js';
import type { CallOutcome } from './adapters/pacing/index.js';
import { createWebConsole } from './adapters/web-console/index.js';
import { type AppConfig, enabledPlatforms, type ModelEndpoint, missingApprovers } from './config/index.js';
import type { ButlerIntake, ChatAdapter } from './core/adapter.js';
import { Delegator } from './core/agents/delegator.js';
import { Router } from './core/agents/router.js';
import { ApprovalService } from './core/approvals/approval-service.js';
import { Compactor } from './core/brain/compactor.js';
import { SessionBrain } from './core/brain/session-brain.js';
import { ButlerService } from './core/butler-service.js';
import { decodeConversationKey } from './core/conversation-key.js';
import { ConfigError, type ConfigIssue } from './core/errors.js';
import type { EventBus } from './core/event-bus.js';
import type { Platform } from './core/events.js';
import type { Logger } from './core/logger.js';
import { OpenAIModel } from './core/model/openai-model.js';
import { noopObserver, type Observer } from './core/observer.js';
import { combineObservers } from './core/observer-fanout.js';
import { guardObserver } from './core/observer-guard.js';
import type { Store } from './core/store.js';
import { createHttpTool } from './core/tools/http-tool.js';
import { McpServerGroup } from './core/tools/mcp/server-group.js';
import { createMemoryTools } from './core/tools/memory-tools.js';
import { ApprovalPolicy } from './core/tools/policy.js';
import { ToolRegistry } from './core/tools/registry.js';
import { TurnRunner } from './core/turn/turn-runner.js';
import { Worker } from './core/worker.js';
import { clientFetch } from './http/client-fetch.js';
import { createHttpServer, type HttpServer, type RouteHandler } from './http/server.js';
import { createEventsObserver } from './observability/events-observer.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { type OpenDatabase, openDatabase } from './storage/database.js';
import { createEventBus } from './storage/event-bus.js';
import { createStore } from './storage/store.js';

/**
 * The composition root: builds every concrete piece from the config and passes it down.
 * `main.ts` (the service) and `adapters/console` (the terminal chat) both start Butler through here.
 */

/** Hears each platform Web API call as the pacing layer saw it end (metrics). */
export type ApiCallObserver = (platform: Platform, method: string, outcome: CallOutcome) => void;

export type ConnectorFactory = (
  intake: ButlerIntake,
  onApiCall?: ApiCallObserver,
) => Promise<PlatformConnector[]>;

export interface CreateButlerOptions {
  logger: Logger;
  /** Platform integrations to start (Slack, Feishu); see `platform-connectors.ts`. */
  connectors?: ConnectorFactory;
  /** Adapters that live in this process without HTTP routes (the terminal chat). */
  adapters?: ChatAdapter[];
  /** Listen for HTTP (the service) or not (the terminal chat). */
  listen?: boolean;
  /** Overrides the configured PGlite directory (tests use `memory://`). */
  dataDir?: string;
}

export interface Butler {
  readonly config: AppConfig;
  readonly service: ButlerService;
  readonly worker: Worker;
  readonly store: Store;
  readonly database: OpenDatabase;
  readonly connectors: readonly PlatformConnector[];
  /** Tools offered now, with their risk, for the start-up banner. */
  toolNames(): string[];
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

/** /readyz answers within about this long even when the database hangs. */
const readinessPingMs = 1000;

function modelClient(
  endpoint: ModelEndpoint,
  config: AppConfig,
  limits: { timeoutMs: number; maxRetries: number } = config.file.model,
): OpenAIModel {
  return new OpenAIModel({
    baseUrl: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    model: endpoint.model,
    timeoutMs: limits.timeoutMs,
    maxRetries: limits.maxRetries,
    temperature: config.file.model.temperature,
    fetch: clientFetch,
  });
}

/** Specialists and the routing step, when agents are configured and Butler has a model. */
function createAgents(config: AppConfig, model: OpenAIModel | undefined, tools: ToolRegistry, store: Store) {
  if (!model || !config.model || config.agents.length === 0) return {};
  const specs = config.agents.map((agent) => ({
    ...agent,
    model: agent.endpoint ? modelClient(agent.endpoint, config) : model,
  }));
  const delegator = new Delegator(specs, tools, store, config.file.delegation);
  const { routing } = config;
  if (!routing.enabled) return { delegator };
  // One quick attempt: a slow or failing routing step only costs the turn its shortcut.
  const routingModel = modelClient(routing.endpoint ?? config.model, config, {
    timeoutMs: routing.timeoutMs,
    maxRetries: 0,
  });
  return { delegator, router: new Router(routingModel, specs, store, routing) };
}

/**
 * Tracing when it is on, and the live event stream when the API can serve it; each behind the guard that
 * keeps replies safe. With neither, turns report to a no-op.
 */
async function createObserver(
  config: AppConfig,
  bus: EventBus | undefined,
  metrics: Metrics | undefined,
  logger: Logger,
): Promise<Observer> {
  const observers: Observer[] = bus ? [guardObserver(createEventsObserver(bus), logger)] : [];
  if (metrics) observers.push(guardObserver(metrics.observer, logger));
  if (config.langfuse.enabled) {
    // Loaded only when tracing is on: OpenTelemetry and the Langfuse packages add about 30 MB of memory.
    const { createLangfuseObserver } = await import('./observability/langfuse-observer.js');
    const langfuse = createLangfuseObserver({
      publicKey: config.langfuse.publicKey,
      secretKey: config.langfuse.secretKey,
      baseUrl: config.langfuse.baseUrl,
      serviceName: config.serviceName,
      logger,
    });
    observers.push(guardObserver(langfuse, logger));
  }
  return observers.length > 0 ? combineObservers(...observers) : noopObserver;
}

export async function createButler(config: AppConfig, options: CreateButlerOptions): Promise<Butler> {
  const { logger } = options;
  const { file } = config;
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: options.dataDir ?? config.dataDir,
    logger,
  });
  const store = createStore(database.db);
  // An embedded database belongs to this process alone (lockfile): leases left by a crash are stale.
  if (database.kind === 'pglite') await store.inbox.releaseAllLeases();

  // Only GET /api/v1/events listens: without API keys, turns publish nothing (no NOTIFY per turn). Processes
  // sharing a database share their config, so each one that serves the stream also feeds it.
  const bus = config.apiKeys.length > 0 ? createEventBus(database, logger) : undefined;
  const model = config.model ? modelClient(config.model, config) : undefined;
  const compactionEndpoint = config.compaction.model ?? config.model;
  const compactor = compactionEndpoint
    ? new Compactor(modelClient(compactionEndpoint, config), {
        timeoutMs: file.compaction.timeoutMs,
        maxSummaryTokens: Math.max(200, Math.floor(config.compaction.thresholdTokens * 0.2)),
      })
    : undefined;
  const brain = new SessionBrain(
    store,
    compactor,
    {
      enabled: config.compaction.enabled,
      thresholdTokens: config.compaction.thresholdTokens,
      keepRecentRatio: file.compaction.keepRecentRatio,
      retryAfterMs: file.compaction.retryAfterSeconds * 1000,
    },
    logger,
  );
  const toolList = [...createMemoryTools(store.memories), ...file.tools.map(createHttpTool)];
  const mcp = new McpServerGroup(config.mcpServers, logger);
  const tools = new ToolRegistry(toolList, mcp.servers, logger);
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
  /** What the tool lists known so far break: name clashes, high-risk tools nobody may approve. */
  const toolProblems = (): ConfigIssue[] => [
    ...tools.clashes().map((clash) => ({
      variable: 'config file: mcpServers',
      message: `${clash.kept} and ${clash.dropped} would both be named ${clash.name}`,
    })),
    ...missingApprovers(
      file,
      enabledPlatforms(config),
      mcp
        .tools()
        .filter((tool) => tool.risk === 'high')
        .map((tool) => tool.name),
    ),
  ];
  // A server that connects after start-up (or changes its list) cannot stop Butler: say what is wrong.
  const reportedProblems = new Set<string>();
  for (const server of mcp.servers)
    server.onToolsChanged(() => {
      for (const problem of toolProblems()) {
        if (reportedProblems.has(problem.message)) continue;
        reportedProblems.add(problem.message);
        logger.error({ mcpServer: server.name, variable: problem.variable }, problem.message);
      }
    });
  const policy = new ApprovalPolicy(file.approvers);
  const { delegator, router } = createAgents(config, model, tools, store);

  let worker: Worker | undefined;
  const wake = () => worker?.wake();
  const adapters = new Map<Platform, ChatAdapter>();
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
  });
  const service = new ButlerService(store, approvals, file.access, logger, wake, file.maxMessageChars);

  const connectors = (await options.connectors?.(service, metrics?.platformCall)) ?? [];
  const api =
    config.apiKeys.length > 0
      ? createApi({ keys: config.apiKeys, intake: service, store, bus, logger, streams: file.api.streams })
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
    options: {
      systemPrompt: file.systemPrompt,
      maxSteps: file.model.maxSteps,
      approvalTtlMs: file.approvalTtlMinutes * 60_000,
      memoriesInPrompt: 10,
      deliveryRetryMs: file.worker.deliveryRetrySeconds * 1000,
      workingIndicatorDelayMs: file.worker.workingIndicatorMilliseconds,
      pricing: file.pricing,
    },
  });
  worker = new Worker(
    store,
    runner,
    approvals,
    adapters,
    {
      leaseMs: file.worker.leaseSeconds * 1000,
      pollMs: file.worker.pollMilliseconds,
      concurrency: file.worker.concurrency,
      messagesPerMinute: file.rateLimit.messagesPerMinute,
      maxAttempts: 3,
      sweepMs: file.worker.sweepMilliseconds,
      inboxRetentionMs: file.worker.inboxRetentionHours * 3_600_000,
    },
    logger,
  );

  const routes = new Map<string, RouteHandler>();
  for (const connector of connectors)
    for (const [path, handler] of connector.routes) routes.set(path, handler);
  let started = false;
  const http: HttpServer | undefined = options.listen
    ? createHttpServer({
        port: config.port,
        logger,
        routes,
        limits: file.http,
        prefixRoutes: new Map([...(api?.prefixRoutes ?? []), ...createWebConsole().prefixRoutes]),
        metrics: metrics?.render,
        readiness: async () => {
          const checks: Record<string, string> = { database: 'ok', worker: started ? 'ok' : 'starting' };
          try {
            await database.ping(readinessPingMs);
          } catch (error) {
            checks.database = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
          }
          for (const connector of connectors) checks[connector.adapter.platform] = connector.readiness();
          // A down MCP server degrades Butler (its tools are left out) but does not make it unready.
          return {
            ready: Object.values(checks).every((value) => value === 'ok'),
            checks,
            ...(mcp.servers.length > 0 ? { mcp: mcp.describe() } : {}),
          };
        },
      })
    : undefined;

  const butler: Butler = {
    config,
    service,
    worker,
    store,
    database,
    connectors,
    toolNames: () =>
      tools.all().map((tool) => (tool.risk === 'low' ? tool.name : `${tool.name} (${tool.risk} risk)`)),
    mcpStatus: () => mcp.describe(),
    mcpToolsWithoutCard: () =>
      mcp
        .tools()
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
      await Promise.all([mcp.start(), ...connectors.map((connector) => connector.start())]);
      const problems = toolProblems();
      if (problems.length > 0) {
        await Promise.all([mcp.stop(), http?.close()]);
        throw new ConfigError(problems);
      }
      worker?.start();
      started = true;
    },
    async stop(deadlineMs = 10_000) {
      api?.close();
      await http?.close();
      await Promise.all(
        connectors.map((connector) =>
          connector.stop().catch((error: unknown) => logger.warn({ err: error }, 'connector stop failed')),
        ),
      );
      await worker?.stop(deadlineMs);
      await mcp.stop();
      await observer.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'trace flush failed'));
      await bus?.close();
      await database.close();
    },
  };
  return butler;
}
