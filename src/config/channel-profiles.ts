import type { ConfigIssue } from '../core/contracts/errors.js';
import { modelEndpoint } from './agents.js';
import type { ChannelFileConfig } from './channels.js';
import type { Interpolate } from './mcp-servers.js';
import type { ChannelProfileConfig, ModelEndpoint } from './types.js';

/**
 * `channels:` resolved into the core's profile rules, with each profile model's endpoint: `${VAR}` in its
 * `baseUrl` and `apiToken` read from the environment; unknown agents and unset variables are issues.
 */

export interface ResolveChannelsContext {
  butlerModel: ModelEndpoint | undefined;
  /** The configured agents' names, which `agents` must come from. */
  agentNames: readonly string[];
  interpolate: Interpolate;
  issues: ConfigIssue[];
}

function resolveModel(
  channel: ChannelFileConfig,
  path: string,
  context: ResolveChannelsContext,
): ModelEndpoint | undefined {
  const { model } = channel;
  if (!model) return undefined;
  if (model.baseUrl === undefined) {
    if (!context.butlerModel)
      context.issues.push({
        variable: `config file: ${path}.model`,
        message:
          "a model name alone runs on Butler's endpoint: set BUTLER_MODEL, or give baseUrl and apiToken",
      });
    return modelEndpoint(context.butlerModel?.baseUrl, context.butlerModel?.apiKey, model.name);
  }
  // The values reach only the model client, which keeps them out of logs: no list of secrets is needed.
  const secrets: string[] = [];
  const value = (key: 'baseUrl' | 'apiToken', text: string) => {
    const missing: string[] = [];
    const resolved = context.interpolate(text, missing, secrets);
    for (const name of new Set(missing))
      context.issues.push({
        variable: name,
        message: `used by channel profile ${channel.name} (config file: ${path}.model.${key}) but not set`,
      });
    return resolved;
  };
  const baseUrl = value('baseUrl', model.baseUrl);
  const apiToken = value('apiToken', model.apiToken ?? '');
  if (!URL.canParse(baseUrl))
    context.issues.push({ variable: `config file: ${path}.model.baseUrl`, message: 'not a valid URL' });
  return modelEndpoint(baseUrl, apiToken, model.name);
}

/** The profiles in the core's terms, with their model endpoints; unknown agents and unset variables are issues. */
export function resolveChannels(
  channels: readonly ChannelFileConfig[],
  context: ResolveChannelsContext,
): ChannelProfileConfig[] {
  return channels.map((channel, index) => {
    const path = `channels.${index}`;
    channel.agents?.forEach((agent, position) => {
      if (!context.agentNames.includes(agent))
        context.issues.push({
          variable: `config file: ${path}.agents.${position}`,
          message: `no agent is named ${agent} (config file: agents)`,
        });
    });
    return {
      name: channel.name,
      platform: channel.platform,
      where:
        channel.workspace !== undefined
          ? { workspace: channel.workspace }
          : { channels: channel.ids ?? (channel.id ? [channel.id] : []) },
      ...(channel.instructions ? { instructions: channel.instructions } : {}),
      ...(channel.tools ? { tools: channel.tools } : {}),
      ...(channel.agents ? { agents: channel.agents } : {}),
      ...(channel.approvers
        ? { approvers: { ids: channel.approvers, mode: channel.approversMode ?? 'add' } }
        : {}),
      endpoint: resolveModel(channel, path, context),
    };
  });
}
