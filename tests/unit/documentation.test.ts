import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { envSchema } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/index.js';

/** Uncomments the line starting with `prefix` and the more indented commented lines under it, as a user would. */
function uncomment(text: string, prefix: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(prefix));
  if (start === -1) throw new Error(`no line starts with ${JSON.stringify(prefix)}`);
  const indent = prefix.indexOf('#');
  const nested = new RegExp(`^ {${indent}}# {2}`);
  let end = start + 1;
  while (end < lines.length && nested.test(lines[end] ?? '')) end++;
  const opened = lines.slice(start, end).map((line) => line.slice(0, indent) + line.slice(indent + 2));
  return [...lines.slice(0, start), ...opened, ...lines.slice(end)].join('\n');
}

describe('documentation stays in step with the code', () => {
  it('.env.example documents every environment variable, each with a comment', () => {
    const lines = readFileSync('.env.example', 'utf8').split('\n');
    const documented = lines.flatMap((line) => line.match(/^#?\s?([A-Z][A-Z0-9_]+)=/)?.slice(1) ?? []);
    expect(new Set(documented)).toEqual(new Set(Object.keys(envSchema.shape)));
    for (const name of documented) {
      const index = lines.findIndex((line) => new RegExp(`^#?\\s?${name}=`).test(line));
      expect(
        lines.slice(Math.max(0, index - 3), index).some((line) => line.startsWith('# ')),
        name,
      ).toBe(true);
    }
  });

  it('the example config file loads', () => {
    const { config } = loadConfig({ BUTLER_CONFIG: 'butler.config.example.yaml', OPS_TOKEN: 'token' });
    expect(config.file.tools.map((tool) => tool.name)).toEqual(['restart_service']);
    expect(config.file.tools[0]?.http.headers.Authorization).toBe('Bearer token');
  });

  it("the example config's commented API section loads once uncommented, with its approver", () => {
    const example = readFileSync('butler.config.example.yaml', 'utf8');
    const opened = uncomment(uncomment(example, '# api:'), '  # api:');
    const folder = mkdtempSync(join(tmpdir(), 'butler-example-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'butler.config.yaml');
    writeFileSync(path, opened);
    const { config } = loadConfig({
      BUTLER_CONFIG: path,
      OPS_TOKEN: 'token',
      BUTLER_API_KEY_CI: 'ci-key-0123456789abcdef',
      BUTLER_API_KEY_ONCALL: 'oncall-key-0123456789abcdef',
    });
    expect(config.apiKeys).toEqual([
      { name: 'ci-bot', key: 'ci-key-0123456789abcdef', scopes: ['chat'] },
      { name: 'oncall', key: 'oncall-key-0123456789abcdef', scopes: ['chat', 'approve', 'read'] },
    ]);
    expect(config.file.approvers.api).toEqual(['oncall']);
  });
});
