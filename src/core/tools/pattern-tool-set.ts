import type { ToolDefinition } from '../model/model-client.js';
import type { ToolSet } from './registry.js';
import type { Tool } from './tool.js';

/**
 * The tools of a set whose names pass `allowed` (a sub-agent's, a channel profile's): a name outside it is
 * unknown here, whatever the model asks for, so a call to it is refused like any unknown tool.
 */
export class PatternToolSet implements ToolSet {
  private cachedFor: readonly ToolDefinition[] | undefined;
  private cached: ToolDefinition[] = [];

  constructor(
    private readonly tools: ToolSet,
    private readonly allowed: (name: string) => boolean,
  ) {}

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
