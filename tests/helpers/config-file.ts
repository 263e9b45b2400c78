import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import type { AppConfig } from '../../src/config/types.js';
import { ConfigError, type ConfigIssue } from '../../src/core/contracts/errors.js';

/** A config file's content loaded as Butler loads it at start-up: written to a fresh folder, read with `env`. */

export function loadConfigFile(file: unknown, env: Record<string, string> = {}): AppConfig {
  const directory = mkdtempSync(join(tmpdir(), 'butler-config-'));
  writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
  return loadConfig(env, directory).config;
}

/** The problems start-up names for the file; fails the test when it loads. */
export function configIssues(file: unknown, env: Record<string, string> = {}): readonly ConfigIssue[] {
  try {
    loadConfigFile(file, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
