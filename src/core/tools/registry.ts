import type { Logger } from '../contracts/logger.js';
import { silentLogger } from '../contracts/logger.js';
import type { ToolDefinition } from '../model/model-client.js';
import type { Tool } from './tool.js';

/** Tools that come and go at run time: an MCP server offers its tools only while it is connected. */
export interface ToolSource {
  readonly name: string;
  tools(): readonly Tool[];
  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void;
  /** Resolves when a connection attempt in progress has succeeded or failed; never rejects. */
  whenSettled(): Promise<void>;
}

/** The tools one model loop may call: all of them for Butler, a sub-agent's subset for it. */
export interface ToolSet {
  get(name: string): Tool | undefined;
  names(): string[];
  definitions(): ToolDefinition[];
  /** Waits for sources still connecting (right after a start), so that their tools can be found. */
  settled(): Promise<void>;
}

/** Two tools that would reach the model under one name; the second is left out. */
export interface ToolClash {
  name: string;
  kept: string;
  dropped: string;
}

const describe = (tool: Tool) =>
  tool.origin?.kind === 'mcp'
    ? `MCP server ${tool.origin.server} (tool ${tool.origin.tool})`
    : `tool ${tool.name}`;

/**
 * The tools the model may call, by name: built-in and config tools, which never change, plus whatever the
 * sources offer right now. The set is rebuilt when a source's list changes, not per turn, so a turn reads
 * a ready-made list of definitions.
 */
export class ToolRegistry implements ToolSet {
  private byName = new Map<string, Tool>();
  private toolDefinitions: ToolDefinition[] = [];
  private currentClashes: ToolClash[] = [];
  private readonly reported = new Set<string>();

  constructor(
    private readonly fixed: readonly Tool[],
    private readonly sources: readonly ToolSource[] = [],
    private readonly logger: Logger = silentLogger,
  ) {
    const names = new Set<string>();
    for (const tool of fixed) {
      if (names.has(tool.name)) throw new Error(`Two tools are named ${tool.name}`);
      names.add(tool.name);
    }
    for (const source of sources) source.onToolsChanged(() => this.rebuild());
    this.rebuild();
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Every tool offered right now. */
  all(): Tool[] {
    return [...this.byName.values()];
  }

  definitions(): ToolDefinition[] {
    return this.toolDefinitions;
  }

  /** Names that two tools would share; the later source's tool is the one left out. */
  clashes(): readonly ToolClash[] {
    return this.currentClashes;
  }

  async settled(): Promise<void> {
    await Promise.all(this.sources.map((source) => source.whenSettled()));
  }

  private rebuild(): void {
    const byName = new Map<string, Tool>(this.fixed.map((tool) => [tool.name, tool]));
    const clashes: ToolClash[] = [];
    for (const source of this.sources) {
      for (const tool of source.tools()) {
        const existing = byName.get(tool.name);
        if (existing) {
          clashes.push({ name: tool.name, kept: describe(existing), dropped: describe(tool) });
          continue;
        }
        byName.set(tool.name, tool);
      }
    }
    for (const clash of clashes) {
      const key = `${clash.name}\n${clash.dropped}`;
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      this.logger.error({ ...clash }, 'two tools share a name; the second is left out');
    }
    this.byName = byName;
    this.currentClashes = clashes;
    this.toolDefinitions = [...byName.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }));
  }
}
