import type { ToolDefinition } from '../model/model-client.js';
import { includeFilter } from '../tools/name-patterns.js';
import type { ToolSet } from '../tools/registry.js';
import type { Tool } from '../tools/tool.js';
import { delegateToolName } from './agent-spec.js';

/**
 * The tools one sub-agent may call: the registry's tools (MCP ones come and go) whose names match its
 * patterns. A name outside them is unknown to the agent, whatever its model asks for; `delegate` never
 * matches, so a sub-agent cannot delegate further.
 */
export class AgentToolSet implements ToolSet {
  private readonly allowed: (name: string) => boolean;
  private cachedFor: readonly ToolDefinition[] | undefined;
  private cached: ToolDefinition[] = [];

  constructor(
    private readonly tools: ToolSet,
    patterns: readonly string[],
  ) {
    const matches = includeFilter(patterns);
    this.allowed = (name) => name !== delegateToolName && matches(name);
  }

  get(name: string): Tool | undefined {
    return this.allowed(name) ? this.tools.get(name) : undefined;
  }

  names(): string[] {
    return this.tools.names().filter(this.allowed);
  }

  definitions(): ToolDefinition[] {
    // The registry hands out a new list only when its tools change: filter once per list.
    const all = this.tools.definitions();
    if (all !== this.cachedFor) {
      this.cachedFor = all;
      this.cached = all.filter((definition) => this.allowed(definition.name));
    }
    return this.cached;
  }

  settled(): Promise<void> {
    return this.tools.settled();
  }
}
