import type { Platform } from '../contracts/events.js';
import type { ToolSet } from './registry.js';
import type { Tool } from './tool.js';

const offeredOn = (tool: Tool | undefined, platform: Platform) =>
  tool !== undefined && (tool.platforms === undefined || tool.platforms.includes(platform));

/**
 * The tools of `tools` a conversation on `platform` is offered: a tool that works only on some platforms
 * (`Tool.platforms`) is absent elsewhere, from the model's list and from what a call may reach.
 */
export function toolsOn(tools: ToolSet, platform: Platform): ToolSet {
  const everywhere = tools.names().every((name) => offeredOn(tools.get(name), platform));
  if (everywhere) return tools;
  return {
    get: (name) => {
      const tool = tools.get(name);
      return offeredOn(tool, platform) ? tool : undefined;
    },
    names: () => tools.names().filter((name) => offeredOn(tools.get(name), platform)),
    definitions: () =>
      tools.definitions().filter((definition) => offeredOn(tools.get(definition.name), platform)),
    settled: () => tools.settled(),
  };
}
