import type { ConfigIssue } from '../core/contracts/errors.js';
import type { AgentFileConfig, EndpointOverride, RoutingFileConfig } from './agents-schema.js';
import type { Interpolate } from './mcp-servers.js';
import type { AgentConfig, ModelEndpoint, RoutingConfig } from './types.js';

/**
 * `agents`, `delegation` and `routing` in the config file: specialist agents Butler may delegate to, and
 * an optional classification before each turn that may hand the message straight to one. Agents and the
 * router may name their own model; `${VAR}` in `baseUrl` and `apiKey` is read from the environment.
 */

/** `BUTLER_MODEL=demo` without a base URL: Butler's scripted demo model, which Butler serves itself. */
export const demoModelName = 'demo';
/** Where a demo endpoint points until Butler has started the demo model (never reachable: `.invalid`). */
export const demoModelUrl = 'http://demo-model.invalid/v1';

/** Local endpoints (Ollama, vLLM) need no key, but the openai SDK insists on one. */
const placeholderApiKey = 'not-needed';

export function modelEndpoint(
  baseUrl: string | undefined,
  apiKey: string | undefined,
  model: string,
): ModelEndpoint {
  return { baseUrl, apiKey: apiKey ?? placeholderApiKey, model };
}

/**
 * A model name alone means "same endpoint, cheaper model": Butler's base URL and key. A base URL comes
 * with its own key or none. No model name means Butler's own model client (undefined).
 */
export function overrideEndpoint(
  override: EndpointOverride,
  butler: ModelEndpoint | undefined,
): ModelEndpoint | undefined {
  if (!override.model) return undefined;
  return override.baseUrl
    ? modelEndpoint(override.baseUrl, override.apiKey, override.model)
    : modelEndpoint(butler?.baseUrl, override.apiKey ?? butler?.apiKey, override.model);
}

export interface ResolveContext {
  /** Butler's own model, whose endpoint a model name alone reuses. */
  butlerModel: ModelEndpoint | undefined;
  interpolate: Interpolate;
  issues: ConfigIssue[];
}

/** `${VAR}` resolved in `baseUrl` and `apiKey`; unset variables and a bad URL become issues. */
function resolveEndpoint(
  settings: EndpointOverride,
  owner: { label: string; path: string },
  context: ResolveContext,
): ModelEndpoint | undefined {
  // The values reach only the model client, which keeps them out of logs: no list of secrets is needed.
  const secrets: string[] = [];
  const value = (key: 'baseUrl' | 'apiKey') => {
    const text = settings[key];
    if (text === undefined) return undefined;
    const missing: string[] = [];
    const resolved = context.interpolate(text, missing, secrets);
    for (const name of new Set(missing)) {
      context.issues.push({
        variable: name,
        message: `used by ${owner.label} (config file: ${owner.path}.${key}) but not set`,
      });
    }
    return resolved;
  };
  const baseUrl = value('baseUrl');
  const apiKey = value('apiKey');
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) {
    context.issues.push({ variable: `config file: ${owner.path}.baseUrl`, message: 'not a valid URL' });
  }
  return overrideEndpoint({ model: settings.model, baseUrl, apiKey }, context.butlerModel);
}

export function resolveAgents(agents: readonly AgentFileConfig[], context: ResolveContext): AgentConfig[] {
  return agents.map((agent, index) => ({
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    tools: agent.tools,
    endpoint: resolveEndpoint(agent, { label: `agent ${agent.name}`, path: `agents.${index}` }, context),
    maxSteps: agent.maxSteps,
    timeoutMs: agent.timeoutMs,
  }));
}

export function resolveRouting(
  routing: RoutingFileConfig,
  agents: readonly AgentConfig[],
  context: ResolveContext,
): RoutingConfig {
  if (!routing.enabled) return { enabled: false };
  if (agents.length === 0) {
    context.issues.push({
      variable: 'config file: routing.enabled',
      message: 'routing needs at least one agent (config file: agents)',
    });
  }
  return {
    enabled: true,
    endpoint: resolveEndpoint(routing, { label: 'routing', path: 'routing' }, context),
    timeoutMs: routing.timeoutMs,
    minConfidence: routing.minConfidence,
  };
}
