import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/index.js';

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
});
