import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** `metrics:` in the config file: `GET /metrics` is on unless switched off. */

function load(file: unknown) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-metrics-config-'));
  writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
  return loadConfig({}, directory).config;
}

function issues(file: unknown) {
  try {
    load(file);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((issue) => issue.variable);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('metrics config', () => {
  it('is on by default and can be switched off', () => {
    expect(load({}).file.metrics).toEqual({ enabled: true });
    expect(load({ metrics: { enabled: false } }).file.metrics).toEqual({ enabled: false });
  });

  it('names unknown keys and bad values', () => {
    expect(issues({ metrics: { enabled: 'no' } })).toEqual(['config file: metrics.enabled']);
    expect(issues({ metrics: { path: '/stats' } })).toEqual(['config file: metrics']);
  });
});
