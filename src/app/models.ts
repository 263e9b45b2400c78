import type { AgentConfig, AppConfig, ModelEndpoint } from '../config/index.js';
import { Delegator } from '../core/agents/delegator.js';
import { Router } from '../core/agents/router.js';
import { Compactor } from '../core/brain/compactor.js';
import { SessionBrain } from '../core/brain/session-brain.js';
import type { Logger } from '../core/contracts/logger.js';
import type { Store } from '../core/contracts/store.js';
import { OpenAIModel } from '../core/model/openai-model.js';
import type { ToolSet } from '../core/tools/registry.js';
import { clientFetch } from '../http/client-fetch.js';

/** The models Butler talks to: its own, the compaction model's session brain, the agents and the router. */

export function modelClient(
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

/**
 * Specialists and the routing step, when agents are configured and Butler has a model: all of them over
 * every tool, or a channel profile's agents over its tools.
 */
export function createAgents(
  config: AppConfig,
  model: OpenAIModel | undefined,
  tools: ToolSet,
  store: Store,
  agents: readonly AgentConfig[] = config.agents,
) {
  if (!model || !config.model || agents.length === 0) return {};
  const specs = agents.map((agent) => ({
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

/** The session brain: history window plus a rolling summary, compacted by the compaction model (or Butler's). */
export function createBrain(config: AppConfig, store: Store, logger: Logger): SessionBrain {
  const { file } = config;
  const compactionEndpoint = config.compaction.model ?? config.model;
  const compactor = compactionEndpoint
    ? new Compactor(modelClient(compactionEndpoint, config), {
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
