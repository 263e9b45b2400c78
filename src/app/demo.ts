import { createDemoTools, startDemoModel } from '../adapters/demo-model/index.js';
import { type AppConfig, demoModelUrl, type ModelEndpoint } from '../config/index.js';
import type { Logger } from '../core/contracts/logger.js';

/**
 * Demo mode (`BUTLER_MODEL=demo`, no endpoint): Butler starts its scripted demo model on loopback and points
 * every endpoint that names it there, so the model is reached through the `openai` SDK like any other. The
 * demo's two tools join Butler's, and when the terminal has no approver, `demo-approver` is one (`/as
 * demo-approver` in `npm run chat` decides the demo's cards). Off unless the demo model is configured.
 */

export const demoApprover = 'demo-approver';

export async function startDemo(config: AppConfig, logger: Logger) {
  if (config.model?.baseUrl !== demoModelUrl) return undefined;
  const server = await startDemoModel(logger);
  const point = <T extends ModelEndpoint | undefined>(endpoint: T): T =>
    endpoint?.baseUrl === demoModelUrl ? ({ ...endpoint, baseUrl: server.baseUrl } as T) : endpoint;
  const { file } = config;
  const approver = file.approvers.console.length === 0;
  const approvers = approver ? { ...file.approvers, console: [demoApprover] } : file.approvers;
  const pointed: AppConfig = {
    ...config,
    model: point(config.model),
    compaction: { ...config.compaction, model: point(config.compaction.model) },
    agents: config.agents.map((agent) => ({ ...agent, endpoint: point(agent.endpoint) })),
    routing: config.routing.enabled
      ? { ...config.routing, endpoint: point(config.routing.endpoint) }
      : config.routing,
    channels: config.channels.map((profile) => ({ ...profile, endpoint: point(profile.endpoint) })),
    file: { ...file, approvers },
  };
  logger.info({ endpoint: server.baseUrl }, 'demo model started: scripted replies, not an LLM');
  return { config: pointed, approver, tools: createDemoTools(), close: () => server.close() };
}
