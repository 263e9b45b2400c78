import type { AppConfig } from '../config/index.js';
import type { Store } from '../core/contracts/store.js';
import type { OpenAIModel } from '../core/model/openai-model.js';
import { ChannelProfiles, type TurnProfile } from '../core/profiles/index.js';
import { includeFilter } from '../core/tools/name-patterns.js';
import { PatternToolSet } from '../core/tools/pattern-tool-set.js';
import type { ToolRegistry } from '../core/tools/registry.js';
import { createAgents, type ModelClients } from './models.js';

/**
 * The configured channel profiles, each built once: its model client (shared by every profile on its endpoint),
 * the tools it offers, and its agents over those tools. Unmatched conversations get `defaults`.
 */
export function createProfiles(
  config: AppConfig,
  clients: ModelClients,
  store: Store,
  tools: ToolRegistry,
  defaults: TurnProfile & { model: OpenAIModel | undefined },
): ChannelProfiles {
  const profiles = config.channels.map((rule) => {
    const model = rule.endpoint ? clients.client(rule.endpoint) : defaults.model;
    const offered = rule.tools ? new PatternToolSet(tools, includeFilter(rule.tools)) : tools;
    const agents = config.agents.filter((agent) => rule.agents?.includes(agent.name) ?? true);
    // Agents run on their own model or Butler's, over the tools the channel offers.
    const { delegator, router } = createAgents(config, clients, defaults.model, offered, store, agents);
    const turn: TurnProfile = {
      name: rule.name,
      ...(rule.instructions ? { instructions: rule.instructions } : {}),
      model,
      tools: offered,
      ...(delegator ? { delegator } : {}),
      ...(router ? { router } : {}),
    };
    return { ...rule, turn };
  });
  return new ChannelProfiles(profiles, defaults);
}
