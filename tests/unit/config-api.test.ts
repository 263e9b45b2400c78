import { describe, expect, it } from 'vitest';
import { startupBanner } from '../../src/config/banner.js';
import { configIssues, loadConfigFile } from '../helpers/config-file.js';

/** The HTTP API's keys in the config file: resolved from the environment, checked, never shown. */

const ref = (name: string) => `\${${name}}`;
const longKey = 'k-0123456789abcdef';

describe('api keys', () => {
  it('resolves keys from the environment and lists their names, not their keys, in the banner', () => {
    const config = loadConfigFile(
      { api: { keys: [{ name: 'ci-bot', key: ref('CI_KEY'), scopes: ['chat', 'read', 'chat'] }] } },
      { CI_KEY: longKey },
    );
    expect(config.apiKeys).toEqual([{ name: 'ci-bot', key: longKey, scopes: ['chat', 'read'] }]);
    const banner = startupBanner(config, {
      port: 3000,
      databaseLocation: 'db',
      tools: [],
      mcp: {},
      mcpWithoutCard: [],
    });
    expect(banner).toContain('api        on at /api/v1, keys: ci-bot');
    expect(banner).not.toContain(longKey);
  });

  it('limits a key to tenants named slack:… or feishu:…, and refuses one that would chat', () => {
    const config = loadConfigFile(
      { api: { keys: [{ name: 'team-a', key: longKey, scopes: ['read'], tenants: ['slack:T0AAAAAAA1'] }] } },
      {},
    );
    expect(config.apiKeys[0]?.tenants).toEqual(['slack:T0AAAAAAA1']);
    const found = configIssues(
      {
        api: {
          keys: [
            { name: 'chatty', key: longKey, scopes: ['chat'], tenants: ['slack:T0AAAAAAA1'] },
            { name: 'vague', key: `${longKey}-2`, scopes: ['read'], tenants: ['T0AAAAAAA1'] },
          ],
        },
      },
      {},
    );
    expect(found.map((issue) => issue.variable)).toEqual(
      expect.arrayContaining(['config file: api.keys.1.tenants.0']),
    );
    const chatty = configIssues(
      { api: { keys: [{ name: 'chatty', key: longKey, scopes: ['chat'], tenants: ['slack:T0AAAAAAA1'] }] } },
      {},
    );
    expect(chatty).toEqual([
      {
        variable: 'config file: api.keys.0.scopes',
        message: 'chatty is limited to tenants, and cannot chat: its own conversations belong to no tenant',
      },
    ]);
  });

  it('names an unset variable, a short key, a reused key, duplicate names and unknown scopes', () => {
    const found = configIssues(
      {
        api: {
          keys: [
            { name: 'a', key: ref('UNSET_KEY'), scopes: ['chat'] },
            { name: 'b', key: 'short', scopes: ['read'] },
            { name: 'c', key: longKey, scopes: ['read'] },
            { name: 'd', key: longKey, scopes: ['read'] },
          ],
        },
      },
      {},
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ variable: 'UNSET_KEY' }),
        expect.objectContaining({
          variable: 'config file: api.keys.1.key',
          message: expect.stringMatching(/shorter/),
        }),
        expect.objectContaining({
          variable: 'config file: api.keys.3.key',
          message: 'the same key as api.keys.2',
        }),
      ]),
    );
    // The unset variable is the one problem of key a: nothing about a key "-1".
    expect(found.filter((issue) => issue.message.includes('-1'))).toEqual([]);
    expect(found.filter((issue) => issue.variable.includes('api.keys.0'))).toEqual([]);
    expect(
      configIssues({
        api: {
          keys: [
            { name: 'a', key: longKey, scopes: ['admin'] },
            { name: 'a', key: `${longKey}x`, scopes: [] },
          ],
        },
      }).map((issue) => issue.variable),
    ).toEqual(expect.arrayContaining(['config file: api.keys.0.scopes.0', 'config file: api.keys.1.scopes']));
  });

  it('needs an API approver for high-risk tools once a key may chat', () => {
    const tool = {
      name: 'restart_service',
      description: 'Restart.',
      risk: 'high',
      http: { url: 'http://127.0.0.1:9/restart' },
    };
    const approvers = { console: ['olga'] };
    expect(
      configIssues({
        approvers,
        tools: [tool],
        api: { keys: [{ name: 'ci', key: longKey, scopes: ['chat'] }] },
      }),
    ).toEqual([expect.objectContaining({ variable: 'config file: approvers.api' })]);
    expect(() =>
      loadConfigFile({
        approvers,
        tools: [tool],
        api: { keys: [{ name: 'ci', key: longKey, scopes: ['read'] }] },
      }),
    ).not.toThrow();
  });
});
