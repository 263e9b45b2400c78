import { describe, expect, it } from 'vitest';
import {
  argumentValidator,
  summarizeArguments,
  toModelParameters,
} from '../../../src/core/tools/mcp/index.js';

describe('argumentValidator', () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { repo: { type: 'string' }, count: { type: 'integer', default: 1 } },
    required: ['repo'],
  };

  it('validates against the input schema, keeping unknown keys and filling defaults', () => {
    const { validate, fallbackReason } = argumentValidator(schema);
    expect(fallbackReason).toBeUndefined();
    expect(validate({ repo: 'acme/api', extra: true })).toEqual({
      ok: true,
      value: { repo: 'acme/api', count: 1, extra: true },
    });
    const missing = validate({ count: 2 });
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.error).toMatch(/^repo: /);
    expect(validate({ repo: 'a', count: 1.5 }).ok).toBe(false);
  });

  it('refuses anything but a JSON object', () => {
    const { validate } = argumentValidator(schema);
    expect(validate('repo')).toEqual({ ok: false, error: 'arguments: expected a JSON object' });
    expect(validate(null).ok).toBe(false);
    expect(validate([]).ok).toBe(false);
  });

  it('reads draft-07 `definitions` references', () => {
    const { validate, fallbackReason } = argumentValidator({
      type: 'object',
      properties: { point: { $ref: '#/definitions/point' }, definitions: { type: 'string' } },
      definitions: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
    });
    expect(fallbackReason).toBeUndefined();
    expect(validate({ point: { x: 1 }, definitions: 'a property, not a keyword' }).ok).toBe(true);
    expect(validate({ point: { x: 'one' } }).ok).toBe(false);
  });

  it('falls back to any JSON object, with the reason, when the schema cannot be converted', () => {
    const { validate, fallbackReason } = argumentValidator({
      type: 'object',
      properties: { a: { $ref: 'https://example.com/point.json' } },
    });
    expect(fallbackReason).toMatch(/External \$ref is not supported/);
    expect(validate({ a: 1, b: 'anything' })).toEqual({ ok: true, value: { a: 1, b: 'anything' } });
    expect(validate('text').ok).toBe(false);
  });
});

describe('toModelParameters', () => {
  it('drops $schema and makes sure of an object with properties', () => {
    expect(toModelParameters({ $schema: 'x', type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(
      toModelParameters({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });
});

describe('summarizeArguments', () => {
  it('reads like a call, with plain values bare and the rest quoted', () => {
    expect(summarizeArguments('github', 'create_issue', { repo: 'acme/api', title: 'Fix login' })).toBe(
      'github: create_issue(repo=acme/api, title="Fix login")',
    );
    expect(summarizeArguments('fs', 'stat', {})).toBe('fs: stat()');
    expect(summarizeArguments('db', 'query', { limit: 5, tags: ['a', 'b'], on: true })).toBe(
      'db: query(limit=5, tags=["a","b"], on=true)',
    );
  });

  it('stays within about 200 characters', () => {
    const summary = summarizeArguments('github', 'create_issue', {
      body: 'word '.repeat(200),
      title: 't'.repeat(300),
      repo: 'acme/api',
      labels: Array.from({ length: 50 }, (_, index) => `label-${index}`),
    });
    expect(summary.length).toBeLessThanOrEqual(200);
    expect(summary).toMatch(/^github: create_issue\(body="word word/);
    expect(summary.endsWith(')')).toBe(true);
  });
});
