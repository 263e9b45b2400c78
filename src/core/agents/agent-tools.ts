import { includeFilter } from '../tools/name-patterns.js';
import { PatternToolSet } from '../tools/pattern-tool-set.js';
import type { ToolSet } from '../tools/registry.js';
import { delegateToolName } from './agent-spec.js';

/**
 * The tools one sub-agent may call: the registry's tools (MCP ones come and go) whose names match its
 * patterns. A name outside them is unknown to the agent, whatever its model asks for; `delegate` never
 * matches, so a sub-agent cannot delegate further.
 */
export class AgentToolSet extends PatternToolSet {
  constructor(tools: ToolSet, patterns: readonly string[]) {
    const matches = includeFilter(patterns);
    super(tools, (name) => name !== delegateToolName && matches(name));
  }
}
