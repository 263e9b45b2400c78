import { describe, expect, it } from 'vitest';
import { formatToolResult, type McpCallResult, truncateResult } from '../../../src/core/tools/mcp/index.js';

const result = (content: McpCallResult['content'], extra: Partial<McpCallResult> = {}): McpCallResult => ({
  content,
  isError: false,
  ...extra,
});
const base64 = (bytes: number) => Buffer.alloc(bytes).toString('base64');

describe('formatToolResult', () => {
  it('joins text blocks with newlines', () => {
    const text = formatToolResult(
      result([
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ]),
      1_000,
    );
    expect(text).toBe('one\ntwo');
  });

  it('adds structured content as compact JSON unless a text block already carries it', () => {
    const structuredContent = { city: 'Oslo', temperature: 21.5 };
    const repeated = result([{ type: 'text', text: JSON.stringify(structuredContent, null, 2) }], {
      structuredContent,
    });
    expect(formatToolResult(repeated, 1_000)).toBe(JSON.stringify(structuredContent, null, 2));
    const beside = result([{ type: 'text', text: 'three items' }], { structuredContent: { count: 3 } });
    expect(formatToolResult(beside, 1_000)).toBe('three items\n{"count":3}');
    expect(formatToolResult(result([], { structuredContent: { a: [1, 2] } }), 1_000)).toBe('{"a":[1,2]}');
  });

  it('leaves out structured content whose every value is a string the text already shows', () => {
    const file = result([{ type: 'text', text: 'hello from a file\n' }], {
      structuredContent: { content: 'hello from a file\n' },
    });
    expect(formatToolResult(file, 1_000)).toBe('hello from a file\n');
    const numbers = result([{ type: 'text', text: 'It is 33 degrees' }], {
      structuredContent: { temperature: 33 },
    });
    expect(formatToolResult(numbers, 1_000)).toBe('It is 33 degrees\n{"temperature":33}');
    const partly = result([{ type: 'text', text: 'Oslo' }], {
      structuredContent: { city: 'Oslo', country: 'Norway' },
    });
    expect(formatToolResult(partly, 1_000)).toBe('Oslo\n{"city":"Oslo","country":"Norway"}');
  });

  it('describes images and audio instead of inlining them', () => {
    const text = formatToolResult(
      result([
        { type: 'image', data: base64(12 * 1024), mimeType: 'image/png' },
        { type: 'audio', data: base64(300), mimeType: 'audio/wav' },
        { type: 'image', data: base64(3 * 1024 * 1024), mimeType: 'image/jpeg' },
      ]),
      1_000,
    );
    expect(text).toBe('[image: image/png, 12 KB]\n[audio: audio/wav, 300 B]\n[image: image/jpeg, 3.0 MB]');
  });

  it('shows embedded text resources, describes blobs and resource links', () => {
    const text = formatToolResult(
      result([
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } },
        {
          type: 'resource',
          resource: { uri: 'file:///b.pdf', mimeType: 'application/pdf', blob: base64(2048) },
        },
        {
          type: 'resource_link',
          uri: 'file:///c.md',
          name: 'c.md',
          mimeType: 'text/markdown',
          description: 'notes',
        },
        { type: 'unknown', originalType: 'hologram' },
      ]),
      1_000,
    );
    expect(text.split('\n')).toEqual([
      '[resource: file:///a.txt, text/plain]',
      'hello',
      '[resource: file:///b.pdf, application/pdf, 2 KB]',
      '[resource link: c.md <file:///c.md>, text/markdown: notes]',
      '[hologram content, not shown]',
    ]);
  });

  it('says so when there is no content', () => {
    expect(formatToolResult(result([]), 1_000)).toBe('(no content)');
  });

  it('truncates to the limit with a marker saying how much was cut', () => {
    const text = formatToolResult(result([{ type: 'text', text: 'x'.repeat(10_000) }]), 500);
    expect(text.length).toBeLessThanOrEqual(500);
    const cut = 10_000 - text.indexOf('\n');
    expect(text).toMatch(new RegExp(`\\n\\[truncated: ${cut} of 10000 characters cut\\]$`));
  });
});

describe('truncateResult', () => {
  it('leaves short text alone', () => {
    expect(truncateResult('short', 10)).toBe('short');
  });

  it('never splits a surrogate pair', () => {
    const text = truncateResult('😀'.repeat(100), 60);
    const kept = text.slice(0, text.indexOf('\n'));
    expect(kept.length % 2).toBe(0);
    expect(kept).toBe('😀'.repeat(kept.length / 2));
  });
});
