import { describe, expect, it } from 'vitest';
import { type McpToolAnnotations, mcpToolRisk } from '../../../src/core/tools/mcp/index.js';

const risk = (
  annotations: McpToolAnnotations | undefined,
  options: { trust?: boolean; overrides?: object } = {},
) =>
  mcpToolRisk({
    tool: 'create_issue',
    annotations,
    overrides: (options.overrides ?? {}) as Record<string, 'low' | 'medium' | 'high'>,
    trustAnnotations: options.trust ?? true,
  });

describe('mcpToolRisk', () => {
  it('maps trusted annotations: read-only low, explicitly non-destructive medium, else high', () => {
    expect(risk({ readOnlyHint: true })).toBe('low');
    // A tool that says it only reads and also that it destroys is believed on the dangerous side.
    expect(risk({ readOnlyHint: true, destructiveHint: true })).toBe('high');
    expect(risk({ readOnlyHint: true, destructiveHint: false })).toBe('low');
    expect(risk({ destructiveHint: false })).toBe('medium');
    expect(risk({ readOnlyHint: false, destructiveHint: false })).toBe('medium');
    expect(risk({ destructiveHint: true })).toBe('high');
    expect(risk({ idempotentHint: true, openWorldHint: false })).toBe('high');
    expect(risk({})).toBe('high');
    expect(risk(undefined)).toBe('high');
  });

  it('makes every tool high when annotations are not trusted', () => {
    expect(risk({ readOnlyHint: true }, { trust: false })).toBe('high');
    expect(risk({ destructiveHint: false }, { trust: false })).toBe('high');
  });

  it('lets a config override win over annotations and distrust', () => {
    expect(risk({ readOnlyHint: true }, { overrides: { create_issue: 'high' } })).toBe('high');
    expect(risk(undefined, { overrides: { create_issue: 'low' } })).toBe('low');
    expect(risk({ readOnlyHint: true }, { trust: false, overrides: { create_issue: 'medium' } })).toBe(
      'medium',
    );
  });

  it('ignores overrides for other tools and inherited object keys', () => {
    expect(risk({ readOnlyHint: true }, { overrides: { delete_issue: 'high' } })).toBe('low');
    expect(
      mcpToolRisk({
        tool: 'toString',
        annotations: { readOnlyHint: true },
        overrides: {},
        trustAnnotations: true,
      }),
    ).toBe('low');
  });
});
