import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** `http:` (deadlines and connection caps) and `api.streams` in the config file: defaults, and what is refused. */

function load(file: unknown) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-http-config-'));
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

describe('http and api.streams config', () => {
  it('has defaults for a service facing the internet', () => {
    const { file } = load({});
    expect(file.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1000,
      maxConnectionsPerAddress: 200,
      reservedConnections: 100,
    });
    expect(file.api.streams).toEqual({ perKey: 20, total: 200, idleSeconds: 60 });
    expect(
      load({ http: { maxConnections: 50, maxConnectionsPerAddress: 50, reservedConnections: 10 } }).file.http,
    ).toMatchObject({ requestTimeoutMs: 30_000, maxConnections: 50 });
  });

  it('names limits that contradict each other, unknown keys and bad values', () => {
    expect(
      issues({
        http: {
          headersTimeoutMs: 40_000,
          maxConnections: 100,
          maxConnectionsPerAddress: 200,
          reservedConnections: 100,
        },
      }),
    ).toEqual([
      'config file: http.headersTimeoutMs',
      'config file: http.maxConnectionsPerAddress',
      'config file: http.reservedConnections',
    ]);
    expect(issues({ http: { bodyTimeoutMs: 5000 } })).toEqual(['config file: http']);
    expect(issues({ http: { keepAliveTimeoutMs: 0 } })).toEqual(['config file: http.keepAliveTimeoutMs']);
    expect(issues({ api: { streams: { perKey: 0, idleSeconds: -1 } } })).toEqual([
      'config file: api.streams.perKey',
      'config file: api.streams.idleSeconds',
    ]);
  });
});
