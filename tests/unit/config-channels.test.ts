import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** `channels:` in the config file: what a start-up error names, and what a valid profile becomes. */

const butler = {
  BUTLER_MODEL: 'gpt-4o',
  BUTLER_BASE_URL: 'https://models.example.com/v1',
  BUTLER_API_TOKEN: 'sk-butler',
};
const agents = [{ name: 'docs', description: 'Answers from the docs.', instructions: 'You read the docs.' }];

function load(channels: unknown, env: Record<string, string> = butler) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-channels-'));
  writeFileSync(join(directory, 'butler.config.json'), JSON.stringify({ agents, channels }));
  return loadConfig({ BUTLER_CONFIG: 'butler.config.json', ...env }, directory);
}

function issues(
  channels: unknown,
  env?: Record<string, string>,
): ReadonlyArray<{ variable: string; message: string }> {
  try {
    load(channels, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** `${NAME}` as the config file writes it. */
const ref = (name: string) => `\${${name}}`;

const docs = { name: 'docs-desk', platform: 'slack', id: 'C0DOCS' };

describe('channel profiles in the config file', () => {
  it('resolves a profile: where it applies, a model on Butler endpoint or its own, approvers added by default', () => {
    const { config } = load(
      [
        { ...docs, instructions: 'You are the docs desk.', model: 'gpt-4o-mini', tools: ['lookup_docs'] },
        {
          name: 'ops',
          platform: 'slack',
          ids: ['C0OPS', 'C0OPS2'],
          agents: ['docs'],
          approvers: ['U0LEAD'],
          model: { name: 'llama', baseUrl: 'http://models.internal/v1', apiToken: ref('OPS_MODEL_TOKEN') },
        },
        {
          name: 'feishu-all',
          platform: 'feishu',
          workspace: 'tenant1',
          approvers: ['ou_1'],
          approversMode: 'replace',
        },
      ],
      { ...butler, OPS_MODEL_TOKEN: 'sk-ops' },
    );
    const [first, second, third] = config.channels;
    expect(first).toMatchObject({
      where: { channels: ['C0DOCS'] },
      instructions: 'You are the docs desk.',
      tools: ['lookup_docs'],
      endpoint: { baseUrl: butler.BUTLER_BASE_URL, apiKey: 'sk-butler', model: 'gpt-4o-mini' },
    });
    expect(first).not.toHaveProperty('approvers');
    expect(second).toMatchObject({
      where: { channels: ['C0OPS', 'C0OPS2'] },
      agents: ['docs'],
      approvers: { ids: ['U0LEAD'], mode: 'add' },
      endpoint: { baseUrl: 'http://models.internal/v1', apiKey: 'sk-ops', model: 'llama' },
    });
    expect(third).toMatchObject({ where: { workspace: 'tenant1' }, approvers: { mode: 'replace' } });
    expect(third?.endpoint).toBeUndefined();
  });

  it('names the key of each problem: selectors, approversMode alone, unknown keys', () => {
    const found = issues([
      { ...docs, workspace: 'T0' },
      { name: 'none', platform: 'slack' },
      { name: 'mode', platform: 'slack', id: 'C1', approversMode: 'replace' },
      { name: 'typo', platform: 'slack', id: 'C2', tool: ['x'] },
    ]);
    const at = (variable: string) => found.find((issue) => issue.variable === `config file: ${variable}`);
    expect(at('channels.0.workspace')?.message).toContain('exactly one of');
    expect(at('channels.1.id')?.message).toContain('exactly one of');
    expect(at('channels.2.approversMode')?.message).toContain('needs `approvers`');
    expect(at('channels.3')?.message).toContain('tool');
  });

  it('refuses two profiles of one name: traces and audit rows could not tell them apart', () => {
    expect(issues([docs, { ...docs, id: 'C0OTHER' }])).toEqual([
      { variable: 'config file: channels.1.name', message: 'two channel profiles are named docs-desk' },
    ]);
  });

  it('refuses agents that are not configured', () => {
    expect(issues([{ ...docs, agents: ['docs', 'writer'] }])).toEqual([
      {
        variable: 'config file: channels.0.agents.1',
        message: 'no agent is named writer (config file: agents)',
      },
    ]);
  });

  it('refuses a profile endpoint without its token, an unset token variable, and a bare name without Butler model', () => {
    const endpoint = { name: 'llama', baseUrl: 'http://models.internal/v1' };
    expect(issues([{ ...docs, model: endpoint }])).toEqual([
      {
        variable: 'config file: channels.0.model.apiToken',
        message: expect.stringContaining('needs `apiToken`'),
      },
    ]);
    expect(issues([{ ...docs, model: { ...endpoint, apiToken: ref('DOCS_TOKEN') } }])).toEqual([
      {
        variable: 'DOCS_TOKEN',
        message: 'used by channel profile docs-desk (config file: channels.0.model.apiToken) but not set',
      },
    ]);
    expect(issues([{ ...docs, model: { name: 'x', apiToken: 'sk' } }])[0]?.variable).toBe(
      'config file: channels.0.model.baseUrl',
    );
    expect(issues([{ ...docs, model: 'gpt-4o-mini' }], {})).toEqual([
      { variable: 'config file: channels.0.model', message: expect.stringContaining('set BUTLER_MODEL') },
    ]);
  });
});

describe('escalation and channel profiles', () => {
  it('warns at start-up when the on-call may not decide in a profile that replaces the approvers', () => {
    const directory = mkdtempSync(join(tmpdir(), 'butler-channels-'));
    writeFileSync(
      join(directory, 'butler.config.json'),
      JSON.stringify({
        approvers: { slack: ['U0ONCALL', 'U0LEAD'] },
        approvalPolicy: { remindAfter: '30m', escalateAfter: '1h', escalateTo: { slack: ['U0ONCALL'] } },
        channels: [
          { name: 'finance', platform: 'slack', id: 'C0FIN', approvers: ['U0CFO'], approversMode: 'replace' },
          { name: 'docs', platform: 'slack', id: 'C0DOCS', approvers: ['U0DOCS'] },
        ],
      }),
    );
    const { warnings } = loadConfig({ BUTLER_CONFIG: 'butler.config.json', ...butler }, directory);
    expect(warnings.filter((warning) => warning.includes('escalateTo'))).toEqual([
      'channel profile finance: escalateTo U0ONCALL may not decide its requests (approversMode replace), so they are not sent them',
    ]);
  });
});
