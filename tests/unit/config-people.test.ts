import { describe, expect, it } from 'vitest';
import { configIssues, loadConfigFile } from '../helpers/config-file.js';

/** `people:` in the config file: who is who across platforms, checked at start-up with the key path named. */

const api = { keys: [{ name: 'olga', key: 'olga-key-0123456789abcdef', scopes: ['chat', 'approve'] }] };

describe('people', () => {
  it('loads a person with an identity on every platform, and none by default', () => {
    const person = { name: 'olga', slack: 'U0OLGA', feishu: 'ou_olga', api: 'olga', console: 'olga' };
    expect(loadConfigFile({ people: [person], api }).file.people).toEqual([person]);
    expect(loadConfigFile({}).file.people).toEqual([]);
    expect(loadConfigFile({ people: [{ name: 'w.2_x-y', slack: 'W0ENTERPRISE' }] }).file.people).toHaveLength(
      1,
    );
  });

  it('names the key of a bad name, a bad id, an unknown key and a person without identities', () => {
    const found = configIssues({
      people: [
        { name: 'Olga', slack: 'U0OLGA' },
        { name: 'pat', slack: 'pat' },
        { name: 'quinn', feishu: 'oc_chat' },
        { name: 'rita' },
        { name: 'sam', api: 'sam-key' },
        { name: 'tom', slack: 'U0TOM', email: 'tom@example.com' },
        { name: 'x'.repeat(65), console: 'x' },
      ],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ variable: 'config file: people.0.name' }),
        expect.objectContaining({
          variable: 'config file: people.1.slack',
          message: expect.stringContaining('U… or W…'),
        }),
        expect.objectContaining({
          variable: 'config file: people.2.feishu',
          message: expect.stringContaining('ou_'),
        }),
        expect.objectContaining({
          variable: 'config file: people.3',
          message: 'give at least one identity: slack, feishu, api or console',
        }),
        expect.objectContaining({ variable: 'config file: people.5' }),
        expect.objectContaining({ variable: 'config file: people.6.name' }),
      ]),
    );
    // An unknown key is checked once the rest of the file is valid: it needs the resolved keys.
    expect(configIssues({ people: [{ name: 'sam', api: 'sam-key' }], api })).toEqual([
      {
        variable: 'config file: people.0.api',
        message: 'no API key is named sam-key (config file: api.keys)',
      },
    ]);
  });

  it('refuses a name twice and an identity listed for two people', () => {
    const found = configIssues({
      people: [
        { name: 'olga', slack: 'U0OLGA', feishu: 'ou_olga' },
        { name: 'olga', slack: 'U0OLGA2' },
        { name: 'pat', feishu: 'ou_olga' },
        // Ids are their platform's: the same id on two platforms is two identities.
        { name: 'quinn', console: 'U0OLGA' },
      ],
    });
    expect(found).toEqual([
      { variable: 'config file: people.1.name', message: 'people 0 and 1 are both named olga' },
      {
        variable: 'config file: people.2.feishu',
        message: "feishu ou_olga is already people.0's: an identity is one person's",
      },
    ]);
  });

  it("counts a person's other identities as approvers in the start-up checks", () => {
    const tool = {
      name: 'restart_service',
      description: 'Restart.',
      risk: 'high',
      http: { url: 'http://127.0.0.1:9/r' },
    };
    const file = {
      approvers: { slack: ['U0OLGA'] },
      tools: [tool],
      api,
      approvalPolicy: { escalateAfter: '1h', escalateTo: { feishu: ['ou_olga'] } },
    };
    // Olga approves on Slack: her key is an approver over the API, her open_id on Feishu, her name in the terminal.
    expect(() =>
      loadConfigFile({
        ...file,
        people: [{ name: 'olga', slack: 'U0OLGA', feishu: 'ou_olga', api: 'olga', console: 'olga' }],
      }),
    ).not.toThrow();
    expect(configIssues(file).map((issue) => issue.variable)).toEqual([
      'config file: approvers.console',
      'config file: approvers.api',
      'config file: approvalPolicy.escalateTo.feishu',
    ]);
  });
});
