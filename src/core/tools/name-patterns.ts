function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A predicate over tool names from a list of patterns (an MCP server's `include`, an agent's `tools`): exact
 * names or globs where `*` matches any run of characters (`get_*`, `*_issue`). Absent = every tool; an empty
 * list = none. Case-sensitive, like tool names.
 */
export function includeFilter(include: readonly string[] | undefined): (toolName: string) => boolean {
  if (include === undefined) return () => true;
  const exact = new Set(include.filter((pattern) => !pattern.includes('*')));
  const globs = include
    .filter((pattern) => pattern.includes('*'))
    .map((pattern) => new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 's'));
  return (toolName) => exact.has(toolName) || globs.some((glob) => glob.test(toolName));
}
