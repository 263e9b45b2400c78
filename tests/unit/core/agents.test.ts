import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentToolSet } from '../../../src/core/agents/agent-tools.js';
import { parseDelegation } from '../../../src/core/agents/delegate-tool.js';
import { parseDecisionText } from '../../../src/core/agents/router.js';
import type { ModelClient } from '../../../src/core/model/model-client.js';
import { joinNames } from '../../../src/core/text/index.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { ToolRegistry, type ToolSource } from '../../../src/core/tools/registry.js';
import type { Tool } from '../../../src/core/tools/tool.js';

const tool = (name: string): Tool =>
  defineTool({
    name,
    description: name,
    risk: 'low',
    schema: z.object({}),
    summarize: () => name,
    execute: async () => name,
  }) as Tool;

/** An MCP-like source whose tools change at run time. */
function changingSource(initial: Tool[]) {
  let current = initial;
  const listeners: Array<(tools: readonly Tool[]) => void> = [];
  const source: ToolSource = {
    name: 'github',
    tools: () => current,
    onToolsChanged: (listener) => {
      listeners.push(listener);
      return () => {};
    },
    whenSettled: async () => {},
  };
  return {
    source,
    set(tools: Tool[]) {
      current = tools;
      for (const listener of listeners) listener(tools);
    },
  };
}

describe('AgentToolSet', () => {
  it('offers only the tools its patterns name, follows the registry as it changes, and never delegate', () => {
    const github = changingSource([tool('github__get_issue')]);
    const registry = new ToolRegistry(
      [tool('restart_service'), tool('scale_service'), tool('delegate')],
      [github.source],
    );
    const ops = new AgentToolSet(registry, ['restart_service', 'github__*', 'delegate', '*']);
    const narrow = new AgentToolSet(registry, ['restart_service', 'github__*']);
    expect(narrow.names()).toEqual(['restart_service', 'github__get_issue']);
    expect(narrow.get('scale_service')).toBeUndefined();
    expect(ops.get('delegate')).toBeUndefined();
    expect(ops.definitions().map((definition) => definition.name)).not.toContain('delegate');

    github.set([tool('github__get_issue'), tool('github__create_issue')]);
    expect(narrow.definitions().map((definition) => definition.name)).toEqual([
      'restart_service',
      'github__get_issue',
      'github__create_issue',
    ]);
    expect(new AgentToolSet(registry, []).definitions()).toEqual([]);
  });
});

describe('parseDelegation', () => {
  const agents = [{ name: 'ops' }, { name: 'docs' }].map((agent) => ({
    ...agent,
    description: '',
    instructions: '',
    tools: [],
    model: {} as ModelClient,
    maxSteps: 1,
    timeoutMs: 1,
  }));
  const call = (args: string) => ({ id: 'c1', name: 'delegate', arguments: args });

  it('accepts agent, task and optional context', () => {
    expect(
      parseDelegation(call('{"agent":"ops","task":"Check api","context":"in prod"}'), agents),
    ).toMatchObject({
      ok: true,
      request: { agent: 'ops', task: 'Check api', context: 'in prod' },
    });
  });

  it.each([
    ['{broken', /not valid JSON/],
    ['{"agent":"ops"}', /invalid arguments/],
    ['{"agent":"ops","task":"  "}', /task must not be empty/],
    ['{"agent":"sales","task":"x"}', /unknown agent "sales". Agents: ops, docs./],
  ])('refuses %s', (args, error) => {
    const parsed = parseDelegation(call(args), agents);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(error);
  });
});

describe('parseDecisionText', () => {
  it('reads a bare object, a fenced one, and one inside prose', () => {
    const decision = { intent: 'clarify', agent: null, confidence: 0.5, reasoning: 'r' };
    const json = JSON.stringify(decision);
    expect(parseDecisionText(json)).toEqual(decision);
    expect(parseDecisionText(`\`\`\`json\n${json}\n\`\`\``)).toEqual(decision);
    expect(parseDecisionText(`Sure: ${json} hope that helps`)).toEqual(decision);
    expect(() => parseDecisionText('no idea')).toThrow(/no JSON object/);
  });
});

describe('joinNames', () => {
  it('lists names as a sentence does', () => {
    expect(joinNames(['ops'])).toBe('ops');
    expect(joinNames(['ops', 'docs'])).toBe('ops and docs');
    expect(joinNames(['ops', 'docs', 'triage'])).toBe('ops, docs and triage');
  });
});
