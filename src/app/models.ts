import type { AgentConfig, AppConfig, ModelEndpoint } from '../config/index.js';
import { Delegator } from '../core/agents/delegator.js';
import { Router } from '../core/agents/router.js';
import { Compactor } from '../core/brain/compactor.js';
import { SessionBrain } from '../core/brain/session-brain.js';
import type { Logger } from '../core/contracts/logger.js';
import type { Store } from '../core/contracts/store.js';
import { ModelGate, type ModelSlots } from '../core/model/model-gate.js';
import { OpenAIModel } from '../core/model/openai-model.js';
import type { ToolSet } from '../core/tools/registry.js';
import { clientFetch } from '../http/client-fetch.js';

/** The models Butler talks to: its own, the compaction model's session brain, the agents and the router. */

/**
 * Butler's model clients, one per endpoint, model and limits. Every client of one model (Butler's, an agent's on
 * the same endpoint, a channel profile's) shares that model's gate: a 429 one call receives holds back all of
 * them, and with `model.maxConcurrent` they take the model's slots, shared across processes through the database.
 */
export class ModelClients {
  private readonly gates = new Map<string, ModelGate>();
  private readonly clients = new Map<string, OpenAIModel>();

  constructor(
    private readonly config: AppConfig,
    private readonly slots?: ModelSlots,
  ) {}

  client(
    endpoint: ModelEndpoint,
    limits: { timeoutMs: number; maxRetries: number } = this.config.file.model,
  ): OpenAIModel {
    const key = JSON.stringify([
      endpoint.baseUrl,
      endpoint.apiKey,
      endpoint.model,
      limits.timeoutMs,
      limits.maxRetries,
    ]);
    const existing = this.clients.get(key);
    if (existing) return existing;
    const client = new OpenAIModel({
      baseUrl: endpoint.baseUrl,
      apiKey: endpoint.apiKey,
      model: endpoint.model,
      timeoutMs: limits.timeoutMs,
      maxRetries: limits.maxRetries,
      temperature: this.config.file.model.temperature,
      fetch: clientFetch,
      gate: this.gateOf(endpoint),
    });
    this.clients.set(key, client);
    return client;
  }

  /** A model's limits are its account's: the key tells accounts apart here, and never leaves the process. */
  private gateOf(endpoint: ModelEndpoint): ModelGate {
    const key = JSON.stringify([endpoint.baseUrl, endpoint.apiKey, endpoint.model]);
    const gate =
      this.gates.get(key) ??
      new ModelGate(`${endpoint.baseUrl ?? 'https://api.openai.com/v1'} ${endpoint.model}`, this.slots);
    this.gates.set(key, gate);
    return gate;
  }
}

/**
 * Specialists and the routing step, when agents are configured and Butler has a model: all of them over
 * every tool, or a channel profile's agents over its tools.
 */
export function createAgents(
  config: AppConfig,
  clients: ModelClients,
  model: OpenAIModel | undefined,
  tools: ToolSet,
  store: Store,
  agents: readonly AgentConfig[] = config.agents,
) {
  if (!model || !config.model || agents.length === 0) return {};
  const specs = agents.map((agent) => ({
    ...agent,
    model: agent.endpoint ? clients.client(agent.endpoint) : model,
  }));
  const delegator = new Delegator(specs, tools, store, config.file.delegation);
  const { routing } = config;
  if (!routing.enabled) return { delegator };
  // One quick attempt: a slow or failing routing step only costs the turn its shortcut.
  const routingModel = clients.client(routing.endpoint ?? config.model, {
    timeoutMs: routing.timeoutMs,
    maxRetries: 0,
  });
  return { delegator, router: new Router(routingModel, specs, store, routing) };
}

/** The session brain: history window plus a rolling summary, compacted by the compaction model (or Butler's). */
export function createBrain(
  config: AppConfig,
  clients: ModelClients,
  store: Store,
  logger: Logger,
): SessionBrain {
  const { file } = config;
  const compactionEndpoint = config.compaction.model ?? config.model;
  const compactor = compactionEndpoint
    ? new Compactor(clients.client(compactionEndpoint), {
        timeoutMs: file.compaction.timeoutMs,
        maxSummaryTokens: Math.max(200, Math.floor(config.compaction.thresholdTokens * 0.2)),
      })
    : undefined;
  return new SessionBrain(
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
}
