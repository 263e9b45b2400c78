import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** `budgets:` in the config file: strict entries, and the checks across settings they need. */

function load(file: unknown, env: Record<string, string> = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-budgets-config-'));
  writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
  return loadConfig(env, directory).config;
}

function issues(file: unknown, env: Record<string, string> = {}) {
  try {
    load(file, env);
  } catch (error) {
    if (error instanceof ConfigError)
      return error.issues.map((issue) => `${issue.variable}: ${issue.message}`);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const ops = { scope: 'channel', platform: 'slack', id: 'C0123OPS', tokensPerDay: 200_000 };
const withModel = { BUTLER_MODEL: 'gpt-4o', BUTLER_CONTEXT_COMPACTION_MODEL: 'gpt-4o-mini' };

describe('budgets config', () => {
  it('defaults to none; an entry stops when spent and warns at nothing unless told', () => {
    expect(load({}).file.budgets).toEqual([]);
    expect(load({ budgets: [ops] }).file.budgets).toEqual([{ ...ops, warnAt: [], onExceeded: 'stop' }]);
  });

  it('names unknown keys, a budget without a limit, bad fractions and a second entry for the same id', () => {
    expect(
      issues({
        budgets: [
          { ...ops, tokensPerDay: undefined },
          { ...ops, id: 'C2', perWeek: 5 },
          { ...ops, id: 'C3', warnAt: [0.5, 1.2, 0.5] },
          { ...ops, scope: 'team', id: 'C4' },
        ],
      }),
    ).toEqual([
      'config file: budgets.0: set tokensPerDay, costPerDay or costPerMonth',
      expect.stringMatching(/^config file: budgets\.1: .*perWeek/),
      expect.stringMatching(/^config file: budgets\.2\.warnAt\.1: /),
      'config file: budgets.2.warnAt: each fraction once',
      expect.stringMatching(/^config file: budgets\.3\.scope: /),
    ]);
    expect(issues({ budgets: [ops, { ...ops, id: 'C2' }, { ...ops, costPerDay: 1 }] })).toEqual([
      'config file: budgets.2.id: a second budget for channel C0123OPS on slack: put its limits in one',
    ]);
  });

  it('refuses a cost limit while a model that spends has no price', () => {
    const costly = { ...ops, tokensPerDay: undefined, costPerMonth: 100 };
    expect(
      issues({ budgets: [costly], pricing: { 'gpt-4o': { input: 2.5, output: 10 } } }, withModel),
    ).toEqual([
      'config file: budgets.0: a cost limit needs a price for the model gpt-4o-mini: add it under pricing',
    ]);
    const priced = {
      budgets: [costly],
      pricing: { 'gpt-4o': { input: 2.5, output: 10 }, 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
    };
    expect(load(priced, withModel).file.budgets).toHaveLength(1);
    // A token limit needs no price.
    expect(load({ budgets: [ops] }, withModel).file.budgets).toHaveLength(1);
  });

  it('refuses an approve budget on a platform without approvers', () => {
    expect(issues({ budgets: [{ ...ops, onExceeded: 'approve' }] })).toEqual([
      'config file: budgets.0.onExceeded: approve needs at least one approver on slack (approvers.slack)',
    ]);
    const approved = { budgets: [{ ...ops, onExceeded: 'approve' }], approvers: { slack: ['U0LEAD'] } };
    expect(load(approved).file.budgets[0]?.onExceeded).toBe('approve');
  });
});
