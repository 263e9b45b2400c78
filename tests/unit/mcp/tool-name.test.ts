import { describe, expect, it } from 'vitest';
import { mcpToolName, toolNamePattern } from '../../../src/core/tools/mcp/index.js';

describe('mcpToolName', () => {
  it('joins server and tool with a double underscore', () => {
    expect(mcpToolName('github', 'create_issue')).toBe('github__create_issue');
  });

  it('replaces characters model APIs refuse with underscores', () => {
    expect(mcpToolName('lark', 'im.v1.message/create')).toBe('lark__im_v1_message_create');
    expect(mcpToolName('fs', 'read file ✓')).toBe('fs__read_file__');
    expect(mcpToolName('a-b', 'c-d')).toBe('a-b__c-d');
  });

  it('shortens long names to 64 characters, deterministically and keeping them apart', () => {
    const tool = `${'very_long_tool_name_'.repeat(4)}`;
    const first = mcpToolName('server', `${tool}one`);
    const second = mcpToolName('server', `${tool}two`);
    expect(first).toHaveLength(64);
    expect(second).toHaveLength(64);
    expect(first).not.toBe(second);
    expect(first.slice(0, 55)).toBe(second.slice(0, 55));
    expect(mcpToolName('server', `${tool}one`)).toBe(first);
    expect(first).toMatch(/_[0-9a-f]{8}$/);
  });

  it('keeps a name of exactly 64 characters as it is', () => {
    const tool = 'x'.repeat(64 - 'srv__'.length);
    expect(mcpToolName('srv', tool)).toBe(`srv__${tool}`);
  });

  it('always produces a name that matches the model API pattern', () => {
    for (const [server, tool] of [
      ['s', ''],
      ['', 't'],
      ['日本', 'ツール'],
      ['srv', '$'.repeat(200)],
    ] as const) {
      expect(mcpToolName(server, tool)).toMatch(toolNamePattern);
    }
  });
});
