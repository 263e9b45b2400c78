import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startupBanner } from '../../src/config/banner.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

function configError(env: Record<string, string>, file?: unknown): ConfigError {
  const directory = mkdtempSync(join(tmpdir(), 'butler-config-'));
  if (file !== undefined)
    writeFileSync(
      join(directory, 'butler.config.yaml'),
      typeof file === 'string' ? file : JSON.stringify(file),
    );
  try {
    loadConfig(env, directory);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const variables = (error: ConfigError) => error.issues.map((issue) => issue.variable);

/** `${NAME}` as the config file writes it. */
const ref = (name: string) => `\${${name}}`;

/** A config file in a fresh directory; returns its path, for BUTLER_CONFIG. */
function writeConfig(file: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'butler-config-')), 'butler.config.json');
  writeFileSync(path, JSON.stringify(file));
  return path;
}

describe('configuration', () => {
  it('starts with nothing configured: embedded database, everything optional off', () => {
    const { config, warnings } = loadConfig({}, mkdtempSync(join(tmpdir(), 'butler-empty-')));
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: undefined,
      dataDir: './.butler',
      model: undefined,
      slack: undefined,
      feishu: undefined,
    });
    expect(config.langfuse).toEqual({ enabled: false });
    expect(config.compaction).toMatchObject({ enabled: true, thresholdTokens: 4000 });
    expect(warnings).toEqual([]);
    const banner = startupBanner(config, {
      port: 3000,
      databaseLocation: '.butler/pglite',
      tools: ['remember'],
      mcp: { github: 'degraded: down (connect ECONNREFUSED); its tools are left out until it is back' },
      mcpWithoutCard: ['fs__read_file', 'fs__list_directory'],
    });
    expect(banner).toContain('these MCP tools run without approval: fs__read_file, fs__list_directory');
    expect(banner).toContain('set BUTLER_MODEL');
    expect(banner).toContain('mcp github degraded: down (connect ECONNREFUSED)');
    expect(banner).toContain('set SLACK_BOT_TOKEN');
    expect(banner).toContain('set FEISHU_APP_ID');
    expect(banner).toContain('set DATABASE_URL');
  });

  it('treats empty variables as unset', () => {
    const { config } = loadConfig(
      { PORT: '', DATABASE_URL: '', SLACK_BOT_TOKEN: '', LANGFUSE_ENABLED: '' },
      tmpdir(),
    );
    expect(config.port).toBe(3000);
    expect(config.slack).toBeUndefined();
  });

  it('names every bad variable in one error', () => {
    const error = configError({
      PORT: 'eighty',
      DATABASE_URL: 'not a url',
      BUTLER_CONTEXT_COMPACTION_ENABLED: 'maybe',
      FEISHU_CONNECTION: 'carrier-pigeon',
    });
    expect(variables(error)).toEqual(
      expect.arrayContaining([
        'PORT',
        'DATABASE_URL',
        'BUTLER_CONTEXT_COMPACTION_ENABLED',
        'FEISHU_CONNECTION',
      ]),
    );
    expect(error.message).toContain('PORT');
  });

  it('takes BUTLER_PUBLIC_URL as an http(s) address without a trailing slash, and refuses others', () => {
    expect(loadConfig({}, tmpdir()).config.publicUrl).toBeUndefined();
    const { config } = loadConfig({ BUTLER_PUBLIC_URL: 'https://butler.example.com/' }, tmpdir());
    expect(config.publicUrl).toBe('https://butler.example.com');
    for (const value of ['butler.example.com', 'javascript:alert(1)', 'ftp://butler.example.com'])
      expect(variables(configError({ BUTLER_PUBLIC_URL: value })), value).toEqual(['BUTLER_PUBLIC_URL']);
  });

  it('reports bad variables and config-file problems together', () => {
    const error = configError({ PORT: 'eighty' }, { approvalTtlMinutes: 'soon' });
    expect(variables(error)).toEqual(['PORT', 'config file: approvalTtlMinutes']);
  });

  it('checks that platform credentials come in complete sets', () => {
    const error = configError({
      SLACK_BOT_TOKEN: 'xoxb-1',
      FEISHU_APP_ID: 'cli_1',
      BUTLER_BASE_URL: 'http://localhost:11434/v1',
    });
    expect(variables(error).sort()).toEqual([
      'BUTLER_MODEL',
      'FEISHU_APP_SECRET',
      'FEISHU_ENCRYPT_KEY',
      'SLACK_SIGNING_SECRET',
    ]);
    expect(variables(configError({ SLACK_APP_TOKEN: 'xapp-1' }))).toEqual(['SLACK_BOT_TOKEN']);
    expect(variables(configError({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xoxb-wrong' }))).toEqual([
      'SLACK_APP_TOKEN',
    ]);
  });

  it('takes installs over OAuth with all three variables, over HTTP, with a public URL; no bot token needed', () => {
    const install = { SLACK_CLIENT_ID: '1.2', SLACK_CLIENT_SECRET: 'secret', SLACK_STATE_SECRET: 'state' };
    const served = {
      ...install,
      SLACK_SIGNING_SECRET: 'signing',
      SLACK_BOT_TOKEN: '',
      BUTLER_PUBLIC_URL: 'https://butler.example.com',
      BUTLER_DATA_DIR: mkdtempSync(join(tmpdir(), 'butler-config-')),
    };
    const { config } = loadConfig(served, tmpdir());
    expect(config.slack).toMatchObject({
      botToken: undefined,
      install: { clientId: '1.2', stateSecret: 'state' },
    });
    // Installed workspaces' tokens are sealed: the embedded database gets a key file, as for connections.
    expect(config.secretKeys).toHaveLength(1);
    expect(variables(configError({ SLACK_CLIENT_ID: '1.2' })).sort()).toEqual([
      'BUTLER_PUBLIC_URL',
      'SLACK_CLIENT_SECRET',
      'SLACK_SIGNING_SECRET',
      'SLACK_STATE_SECRET',
    ]);
    // Socket Mode serves the one workspace its app-level token belongs to.
    expect(variables(configError({ ...served, SLACK_APP_TOKEN: 'xapp-1' }))).toEqual(['SLACK_APP_TOKEN']);
    // A member id names a person in one workspace only: an approver names it, and people cannot yet.
    const error = configError(served, {
      approvers: { slack: ['T0AAAAAAA/U0OLGA', 'U0BEN'] },
      people: [{ name: 'ana', slack: 'U0ANA' }],
      mcpServers: [
        { name: 'tickets', url: 'https://tickets.example.com/mcp', oauth: { identity: 'person' } },
      ],
    });
    expect(variables(error).sort()).toEqual([
      'config file: approvers.slack',
      'config file: mcpServers.0.oauth.identity',
      'config file: people.0.slack',
    ]);
    expect(error.message).toContain('U0BEN names no workspace');
  });

  it('refuses approval-gated tools on a Feishu webhook whose card callbacks would be unsigned', () => {
    const feishu = { FEISHU_APP_ID: 'cli_1', FEISHU_APP_SECRET: 's', FEISHU_VERIFICATION_TOKEN: 'token' };
    const restart = {
      name: 'restart_service',
      description: 'Restart a service.',
      risk: 'medium',
      http: { url: 'https://ops.example.com/restart' },
    };
    const file = { approvers: { feishu: ['ou_approver'] }, tools: [restart] };
    const error = configError(feishu, file);
    expect(variables(error)).toEqual(['FEISHU_ENCRYPT_KEY']);
    expect(error.message).toContain('restart_service');
    // Signed callbacks (an Encrypt Key) or the long connection are fine; so are tools that need no card.
    const directory = mkdtempSync(join(tmpdir(), 'butler-config-'));
    writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
    expect(() => loadConfig({ ...feishu, FEISHU_ENCRYPT_KEY: 'key' }, directory)).not.toThrow();
    expect(() => loadConfig({ ...feishu, FEISHU_CONNECTION: 'websocket' }, directory)).not.toThrow();
    writeFileSync(
      join(directory, 'butler.config.yaml'),
      JSON.stringify({ tools: [{ ...restart, risk: 'low' }] }),
    );
    expect(() => loadConfig(feishu, directory)).not.toThrow();
  });

  it('accepts Socket Mode without a signing secret and a Feishu long connection without an encrypt key', () => {
    const { config } = loadConfig(
      {
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_APP_TOKEN: 'xapp-1',
        FEISHU_APP_ID: 'cli',
        FEISHU_APP_SECRET: 's',
        FEISHU_CONNECTION: 'websocket',
        FEISHU_DOMAIN: 'lark',
      },
      tmpdir(),
    );
    expect(config.slack?.appToken).toBe('xapp-1');
    expect(config.feishu).toMatchObject([{ connection: 'websocket', baseUrl: 'https://open.larksuite.com' }]);
  });

  it('uses the Butler endpoint for a compaction model given by name only', () => {
    const { config } = loadConfig(
      {
        BUTLER_BASE_URL: 'http://models/v1',
        BUTLER_API_TOKEN: 'sk-1',
        BUTLER_MODEL: 'big',
        BUTLER_CONTEXT_COMPACTION_MODEL: 'small',
      },
      tmpdir(),
    );
    expect(config.compaction.model).toEqual({ baseUrl: 'http://models/v1', apiKey: 'sk-1', model: 'small' });
  });

  it('turns tracing off with a warning when Langfuse keys are missing', () => {
    const { config, warnings } = loadConfig(
      { LANGFUSE_ENABLED: 'true', LANGFUSE_PUBLIC_KEY: 'pk' },
      tmpdir(),
    );
    expect(config.langfuse).toEqual({ enabled: false });
    expect(warnings).toEqual(['LANGFUSE_ENABLED is true but LANGFUSE_SECRET_KEY unset: tracing stays off']);
  });

  it('rejects a high-risk tool without approvers on an enabled platform', () => {
    const tool = {
      name: 'restart_service',
      description: 'Restart a service.',
      risk: 'high',
      http: { url: 'https://ops.example.com/restart' },
    };
    const error = configError(
      { SLACK_BOT_TOKEN: 'xoxb', SLACK_SIGNING_SECRET: 'secret' },
      { tools: [tool], approvers: { feishu: ['ou_1'] } },
    );
    expect(variables(error)).toEqual(['config file: approvers.slack']);
    expect(error.message).toContain('restart_service');
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test name quotes the config syntax.
  it('interpolates ${VAR} in tool URLs and headers, and names unset ones', () => {
    const file = `
tools:
  - name: deploy
    description: Deploy.
    risk: medium
    http:
      url: \${OPS_URL}/deploy
      headers: { Authorization: "Bearer \${OPS_TOKEN}" }
`;
    const directory = mkdtempSync(join(tmpdir(), 'butler-tools-'));
    writeFileSync(join(directory, 'butler.config.yaml'), file);
    const { config } = loadConfig({ OPS_URL: 'https://ops.example.com', OPS_TOKEN: 't0k3n' }, directory);
    expect(config.file.tools[0]?.http).toMatchObject({
      url: 'https://ops.example.com/deploy',
      headers: { Authorization: 'Bearer t0k3n' },
      method: 'POST',
      timeoutMs: 10_000,
    });
    expect(variables(configError({}, file))).toEqual(expect.arrayContaining(['OPS_URL', 'OPS_TOKEN']));
  });

  it('rejects unknown keys and bad values in the config file', () => {
    const error = configError(
      {},
      {
        approvers: { slack: ['U1'] },
        approvalTtlMinutes: -5,
        unknownKey: true,
        tools: [{ name: 'x y', risk: 'extreme' }],
      },
    );
    expect(variables(error)).toEqual(
      expect.arrayContaining([
        'config file: approvalTtlMinutes',
        'config file: (root)',
        'config file: tools.0.name',
        'config file: tools.0.risk',
      ]),
    );
  });

  it('says which known key a mistyped one may be, at the top and deeper down', () => {
    const error = configError(
      {},
      { aprovers: { slack: ['U1'] }, mcpServers: [{ name: 'fs', command: 'node', tool: {} }], whatever: 1 },
    );
    const messages = Object.fromEntries(error.issues.map((issue) => [issue.variable, issue.message]));
    expect(messages['config file: (root)']).toContain('"aprovers": did you mean "approvers"?');
    expect(messages['config file: (root)']).not.toContain('"whatever": did you mean');
    expect(messages['config file: mcpServers.0']).toContain('"tool": did you mean "tools"?');
  });

  it('takes only a Postgres connection string as DATABASE_URL', () => {
    const error = configError({ DATABASE_URL: 'postgress://postgres@127.0.0.1:5432/test' });
    expect(error.issues).toEqual([
      { variable: 'DATABASE_URL', message: 'must be a postgres:// or postgresql:// connection string' },
    ]);
    for (const url of ['postgres://postgres@127.0.0.1/test', 'postgresql://postgres@127.0.0.1/test'])
      expect(
        loadConfig({ DATABASE_URL: url, BUTLER_SECRET_KEY: 'b'.repeat(64) }, tmpdir()).config.databaseUrl,
      ).toBe(url);
  });

  it(`reads MCP servers, resolving ${ref('VAR')} in args, env, url and headers and keeping the values as secrets`, () => {
    const { config } = loadConfig({
      BUTLER_CONFIG: writeConfig({
        mcpServers: [
          {
            name: 'lark',
            command: 'npx',
            args: ['-y', '@larksuiteoapi/lark-mcp', 'mcp', '-s', `${ref('LARK_SECRET')}`],
            env: { LOG_LEVEL: 'warn', TOKEN: `${ref('LARK_TOKEN')}` },
          },
          {
            name: 'github',
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: `Bearer ${ref('GITHUB_TOKEN')}` },
            timeoutMs: 30_000,
            tools: { include: ['get_*', 'create_issue'], risk: { create_issue: 'medium' } },
            trustAnnotations: false,
          },
        ],
      }),
      LARK_SECRET: 'lark-s3cret',
      LARK_TOKEN: 'lark-t0ken',
      GITHUB_TOKEN: 'ghp_github',
    });
    const [lark, github] = config.mcpServers;
    expect(lark).toMatchObject({
      name: 'lark',
      transport: { kind: 'stdio', command: 'npx', env: { LOG_LEVEL: 'warn', TOKEN: 'lark-t0ken' } },
      timeoutMs: 60_000,
      connectTimeoutMs: 15_000,
      trustAnnotations: true,
      risk: {},
      secrets: ['lark-s3cret', 'lark-t0ken'],
    });
    expect(lark?.transport.kind === 'stdio' && lark.transport.args.at(-1)).toBe('lark-s3cret');
    expect(github).toMatchObject({
      transport: {
        kind: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer ghp_github' },
      },
      timeoutMs: 30_000,
      include: ['get_*', 'create_issue'],
      risk: { create_issue: 'medium' },
      trustAnnotations: false,
      secrets: ['ghp_github'],
    });
    expect(config.file.standingApprovalHours).toBe(8);
  });

  it('names every bad key of an MCP server entry', () => {
    const error = configError(
      {},
      {
        mcpServers: [
          { name: 'a__b', command: 'node', tools: { include: 'all', deny: [] } },
          { name: 'web', url: 'https://mcp.example.com', args: ['x'], timeout: 5 },
          { name: 'empty' },
        ],
        standingApprovalHours: -1,
      },
    );
    expect(variables(error)).toEqual(
      expect.arrayContaining([
        'config file: mcpServers.0.name',
        'config file: mcpServers.0.tools.include',
        'config file: mcpServers.0.tools',
        'config file: mcpServers.1',
        'config file: mcpServers.1.args',
        'config file: mcpServers.2.command',
        'config file: standingApprovalHours',
      ]),
    );
  });

  it('refuses an MCP server with both transports, and two servers of one name', () => {
    const error = configError(
      {},
      {
        mcpServers: [
          { name: 'web', command: 'node', url: 'https://mcp.example.com', headers: {} },
          { name: 'files', command: 'node' },
          { name: 'files', url: 'https://mcp.example.com' },
        ],
      },
    );
    expect(variables(error)).toEqual(
      expect.arrayContaining(['config file: mcpServers.0.url', 'config file: mcpServers.0.headers']),
    );
    const duplicate = configError(
      {},
      {
        mcpServers: [
          { name: 'files', command: 'node' },
          { name: 'files', url: 'https://mcp.example.com' },
        ],
      },
    );
    expect(variables(duplicate)).toEqual(['config file: mcpServers.1.name']);
  });

  it('names unset variables of an MCP server and a URL that is not one', () => {
    const error = configError(
      {},
      {
        mcpServers: [
          { name: 'lark', command: 'npx', args: ['-s', `${ref('UNSET_LARK_SECRET')}`] },
          { name: 'web', url: `${ref('UNSET_BASE')}/mcp` },
        ],
      },
    );
    expect(variables(error)).toEqual(
      expect.arrayContaining(['UNSET_LARK_SECRET', 'UNSET_BASE', 'config file: mcpServers.1.url']),
    );
    expect(error.message).toContain('used by MCP server lark');
  });

  describe('agents and routing', () => {
    const ops = {
      name: 'ops',
      description: 'Deploys, restarts and checks production services.',
      instructions: 'You operate production services.',
    };
    const butler = { BUTLER_BASE_URL: 'http://models/v1', BUTLER_API_TOKEN: 'sk-1', BUTLER_MODEL: 'big' };

    it('defaults to no agents, no routing and three delegations at once', () => {
      const { config } = loadConfig({ BUTLER_CONFIG: writeConfig({}) });
      expect(config.agents).toEqual([]);
      expect(config.routing).toEqual({ enabled: false });
      expect(config.file.delegation.maxParallel).toBe(3);

      const { config: withAgent } = loadConfig({ BUTLER_CONFIG: writeConfig({ agents: [ops] }) });
      expect(withAgent.agents).toEqual([
        { ...ops, tools: [], endpoint: undefined, maxSteps: 6, timeoutMs: 120_000 },
      ]);
    });

    it("gives a model named alone Butler's endpoint and key, and lists agents in the banner", () => {
      const { config } = loadConfig({
        ...butler,
        BUTLER_CONFIG: writeConfig({
          agents: [{ ...ops, model: 'small', tools: ['restart_service', 'github__*'] }],
          routing: { enabled: true, model: 'tiny' },
        }),
      });
      expect(config.agents[0]?.endpoint).toEqual({
        baseUrl: 'http://models/v1',
        apiKey: 'sk-1',
        model: 'small',
      });
      expect(config.routing).toEqual({
        enabled: true,
        endpoint: { baseUrl: 'http://models/v1', apiKey: 'sk-1', model: 'tiny' },
        timeoutMs: 5000,
        minConfidence: 0.7,
      });
      const banner = startupBanner(config, {
        port: 3000,
        databaseLocation: 'db',
        tools: [],
        mcp: {},
        mcpWithoutCard: [],
      });
      expect(banner).toContain('agent ops  2 tool patterns, model small');
      expect(banner).toContain('routing    on (tiny)');
    });

    it(`reads an endpoint of its own, resolving ${ref('VAR')} in baseUrl and apiKey`, () => {
      const { config } = loadConfig({
        ...butler,
        BUTLER_CONFIG: writeConfig({
          agents: [
            { ...ops, model: 'm', baseUrl: `${ref('OPS_HOST')}/v1`, apiKey: ref('OPS_KEY') },
            { ...ops, name: 'local', model: 'qwen', baseUrl: 'http://localhost:11434/v1' },
          ],
        }),
        OPS_HOST: 'https://ops-models.example.com',
        OPS_KEY: 'sk-ops',
      });
      expect(config.agents.map((agent) => agent.endpoint)).toEqual([
        { baseUrl: 'https://ops-models.example.com/v1', apiKey: 'sk-ops', model: 'm' },
        { baseUrl: 'http://localhost:11434/v1', apiKey: 'not-needed', model: 'qwen' },
      ]);
    });

    it('names unset variables with the key that uses them', () => {
      const error = configError(
        {},
        {
          agents: [
            { ...ops, model: 'm', baseUrl: 'https://models.example.com', apiKey: ref('UNSET_OPS_KEY') },
          ],
          routing: { enabled: true, model: 'm', baseUrl: `${ref('UNSET_ROUTER_HOST')}/v1` },
        },
      );
      expect(variables(error)).toEqual(expect.arrayContaining(['UNSET_OPS_KEY', 'UNSET_ROUTER_HOST']));
      expect(error.message).toContain('used by agent ops (config file: agents.0.apiKey) but not set');
      expect(error.message).toContain('used by routing (config file: routing.baseUrl) but not set');
    });

    it('names a baseUrl or apiKey without a model, and an apiKey without a baseUrl', () => {
      const error = configError(
        {},
        {
          agents: [
            { ...ops, baseUrl: 'https://models.example.com' },
            { ...ops, name: 'docs', model: 'm', apiKey: 'sk' },
          ],
          routing: { apiKey: 'sk' },
        },
      );
      expect(variables(error).sort()).toEqual([
        'config file: agents.0.baseUrl',
        'config file: agents.1.apiKey',
        'config file: routing.apiKey',
      ]);
      expect(error.message).toContain('needs `model`');
    });

    it('names both agents sharing a name, and a name that is not an identifier', () => {
      const duplicate = configError({}, { agents: [ops, { ...ops, name: 'docs' }, ops] });
      expect(variables(duplicate)).toEqual(['config file: agents.2.name']);
      expect(duplicate.message).toContain('agents 0 and 2 are both named ops');

      const bad = configError(
        {},
        {
          agents: [
            { ...ops, name: 'ops-team' },
            { ...ops, name: 'a'.repeat(33) },
            { ...ops, extra: 1 },
          ],
        },
      );
      expect(variables(bad)).toEqual([
        'config file: agents.0.name',
        'config file: agents.1.name',
        'config file: agents.2',
      ]);
      expect(
        loadConfig({ BUTLER_CONFIG: writeConfig({ agents: [{ ...ops, name: 'delegate' }] }) }).config.agents,
      ).toHaveLength(1);
    });

    it('refuses routing without agents, and bad limits', () => {
      const error = configError({}, { routing: { enabled: true } });
      expect(variables(error)).toEqual(['config file: routing.enabled']);
      expect(error.message).toContain('routing needs at least one agent');

      const limits = configError(
        {},
        {
          agents: [{ ...ops, maxSteps: 0 }],
          delegation: { maxParallel: 9 },
          routing: { minConfidence: 1.5 },
        },
      );
      expect(variables(limits)).toEqual([
        'config file: agents.0.maxSteps',
        'config file: delegation.maxParallel',
        'config file: routing.minConfidence',
      ]);
    });

    it("routes with Butler's model and default limits when only enabled", () => {
      const { config } = loadConfig({
        ...butler,
        BUTLER_CONFIG: writeConfig({ agents: [ops], routing: { enabled: true }, delegation: {} }),
      });
      expect(config.routing).toEqual({
        enabled: true,
        endpoint: undefined,
        timeoutMs: 5000,
        minConfidence: 0.7,
      });
      expect(config.file.delegation).toEqual({ maxParallel: 3 });
      const banner = startupBanner(config, {
        port: 3000,
        databaseLocation: 'db',
        tools: [],
        mcp: {},
        mcpWithoutCard: [],
      });
      expect(banner).toContain("agent ops  no tools, Butler's model");
      expect(banner).toContain('routing    on (the Butler model)');
    });
  });

  describe('pricing', () => {
    it('is empty unless configured, and reads USD per million tokens by model', () => {
      const empty = loadConfig({}, mkdtempSync(join(tmpdir(), 'butler-empty-')));
      expect(empty.config.file.pricing).toEqual({});
      const { config } = loadConfig({
        BUTLER_CONFIG: writeConfig({
          pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 }, 'local-llama': { input: 0, output: 0 } },
        }),
      });
      expect(config.file.pricing).toEqual({
        'gpt-4o-mini': { input: 0.15, output: 0.6 },
        'local-llama': { input: 0, output: 0 },
      });
    });

    it('names every bad price', () => {
      const error = configError(
        {},
        {
          pricing: {
            'gpt-4o': { input: -1, output: 10 },
            'gpt-4o-mini': { input: 0.15 },
            cheap: { input: '0.1', output: 0.4, currency: 'EUR' },
            free: 0,
          },
        },
      );
      expect(variables(error).sort()).toEqual([
        'config file: pricing.cheap',
        'config file: pricing.cheap.input',
        'config file: pricing.free',
        'config file: pricing.gpt-4o-mini.output',
        'config file: pricing.gpt-4o.input',
      ]);
    });
  });

  it('names a config file that cannot be read', () => {
    expect(variables(configError({ BUTLER_CONFIG: 'missing.yaml' }))).toContain('BUTLER_CONFIG');
    expect(variables(configError({}, 'tools: [unclosed'))).toContain('BUTLER_CONFIG');
  });
});
