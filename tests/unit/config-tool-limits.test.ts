import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** The config keys that bound what HTTP tools send and what HTTP tools and MCP servers may answer. */

function load(file: unknown) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-limits-'));
  writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
  return loadConfig({}, directory);
}

function issues(file: unknown): string[] {
  try {
    load(file);
  } catch (error) {
    if (error instanceof ConfigError)
      return error.issues.map((issue) => `${issue.variable}: ${issue.message}`);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const tool = (more: Record<string, unknown> = {}, http: Record<string, unknown> = {}) => ({
  name: 'lookup',
  description: 'Looks a record up.',
  risk: 'low',
  http: { method: 'GET', url: 'https://ops.example.com/lookup', ...http },
  ...more,
});

describe('limits in the config file', () => {
  it('caps responses at 1 MB and refuses redirects unless told otherwise', () => {
    const { config } = load({
      tools: [tool(), tool({ name: 'save' }, { redirects: 'same-origin', maxResponseBytes: 65_536 })],
      mcpServers: [
        { name: 'docs', url: 'https://mcp.example.com/mcp' },
        { name: 'big', url: 'https://mcp.example.com/big', maxResponseBytes: 8_388_608 },
      ],
    });
    expect(config.file.tools.map((entry) => entry.http)).toMatchObject([
      { maxResponseBytes: 1_048_576, redirects: 'refuse' },
      { maxResponseBytes: 65_536, redirects: 'same-origin' },
    ]);
    expect(config.mcpServers.map((server) => server.maxResponseBytes)).toEqual([1_048_576, 8_388_608]);
  });

  // Schemas that would promise the model properties an HTTP tool refuses to send.
  const openSchemas = [
    { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: true },
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'object', patternProperties: { '^x-': { type: 'string' } } },
  ];

  it.each(openSchemas)('refuses an input schema open to undeclared properties: %j', (input) => {
    expect(issues({ tools: [tool({ input })] })).toEqual([
      'config file: tools.0.input: declares its arguments in `properties` only: an HTTP tool sends no other property',
    ]);
  });

  it('refuses unknown redirect policies and caps out of range', () => {
    expect(
      issues({
        tools: [tool({}, { redirects: 'follow', maxResponseBytes: 0 })],
        mcpServers: [{ name: 'big', url: 'https://mcp.example.com/mcp', maxResponseBytes: 2 ** 30 }],
      })
        .map((issue) => issue.split(':')[1]?.trim())
        .sort(),
    ).toEqual(['mcpServers.0.maxResponseBytes', 'tools.0.http.maxResponseBytes', 'tools.0.http.redirects']);
  });
});
