import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startupBanner } from '../../src/config/banner.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError, type ConfigIssue } from '../../src/core/contracts/errors.js';

/** A config file in a fresh directory; returns its path, for BUTLER_CONFIG. */
function writeConfig(file: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'butler-config-')), 'butler.config.json');
  writeFileSync(path, JSON.stringify(file));
  return path;
}

function issuesOf(env: Record<string, string>): readonly ConfigIssue[] {
  try {
    loadConfig(env, mkdtempSync(join(tmpdir(), 'butler-config-')));
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** `${NAME}` as the config file writes it. */
const ref = (name: string) => `\${${name}}`;

const bannerOf = (config: ReturnType<typeof loadConfig>['config']) =>
  startupBanner(config, { port: 3000, databaseLocation: 'db', tools: [], mcp: {}, mcpWithoutCard: [] });

const secretKey = 'a'.repeat(64);
const envApp = { FEISHU_APP_ID: 'cli_a1b2c3d4e5f60718', FEISHU_APP_SECRET: 's1', FEISHU_ENCRYPT_KEY: 'k1' };

describe('Feishu apps in the configuration', () => {
  it(`serves the FEISHU_* app first, then each app of the file, with their secrets from ${ref('VAR')}`, () => {
    const { config } = loadConfig({
      ...envApp,
      STORE_SECRET: 'store-secret',
      STORE_KEY: 'store-key',
      BUTLER_SECRET_KEY: secretKey,
      BUTLER_CONFIG: writeConfig({
        feishu: {
          apps: [
            {
              appId: 'cli_b0b0b0b0b0b0b0b0',
              appSecret: ref('STORE_SECRET'),
              encryptKey: ref('STORE_KEY'),
              type: 'isv',
            },
          ],
        },
      }),
    });
    expect(config.feishu).toEqual([
      expect.objectContaining({ appId: envApp.FEISHU_APP_ID, type: 'self_built', encryptKey: 'k1' }),
      expect.objectContaining({
        appId: 'cli_b0b0b0b0b0b0b0b0',
        appSecret: 'store-secret',
        encryptKey: 'store-key',
        connection: 'webhook',
        type: 'isv',
      }),
    ]);
    const banner = bannerOf(config);
    expect(banner).toContain('cli_a1b2c3d4e5f60718 (self-built), webhook at POST /feishu/events');
    expect(banner).toContain(
      'cli_b0b0b0b0b0b0b0b0 (store app), webhook at POST /feishu/cli_b0b0b0b0b0b0b0b0/events',
    );
    expect(banner).not.toContain('store-secret');
  });

  it('keeps /feishu/events for the first app, and for a single app given in the file alone', () => {
    const { config } = loadConfig({
      BUTLER_CONFIG: writeConfig({
        feishu: { apps: [{ appId: 'cli_d0d0d0d0d0d0d0d0', appSecret: 's', encryptKey: 'k' }] },
      }),
    });
    expect(bannerOf(config)).toContain('cli_d0d0d0d0d0d0d0d0 (self-built), webhook at POST /feishu/events');
  });

  it('wants every webhook signed (an Encrypt Key) once there are several tenants, and a real app id', () => {
    const issues = issuesOf({
      FEISHU_APP_ID: envApp.FEISHU_APP_ID,
      FEISHU_APP_SECRET: 's1',
      FEISHU_VERIFICATION_TOKEN: 'token-only',
      BUTLER_CONFIG: writeConfig({
        feishu: {
          apps: [{ appId: 'cli_e0e0e0e0e0e0e0e0', appSecret: 's', encryptKey: 'k' }],
        },
      }),
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        {
          variable: 'FEISHU_ENCRYPT_KEY',
          message: `${envApp.FEISHU_APP_ID} needs an Encrypt Key: with several apps or a store app, every webhook delivery must be signed`,
        },
      ]),
    );
    const badId = issuesOf({
      BUTLER_CONFIG: writeConfig({ feishu: { apps: [{ appId: 'not-an-app', appSecret: 's' }] } }),
    });
    expect(badId).toEqual([expect.objectContaining({ variable: 'config file: feishu.apps.0.appId' })]);
  });

  it('keeps /feishu/events for a single app', () => {
    const { config } = loadConfig({ ...envApp, BUTLER_CONFIG: writeConfig({}) });
    expect(bannerOf(config)).toContain('webhook at POST /feishu/events');
  });

  it('names each bad app setting: a store app over the long connection, twice the same app, an unset secret', () => {
    const issues = issuesOf({
      ...envApp,
      FEISHU_APP_TYPE: 'isv',
      FEISHU_CONNECTION: 'websocket',
      BUTLER_SECRET_KEY: secretKey,
      BUTLER_CONFIG: writeConfig({
        feishu: {
          apps: [
            { appId: envApp.FEISHU_APP_ID, appSecret: 'x', encryptKey: 'y' },
            { appId: 'cli_c0c0c0c0c0c0c0c0', appSecret: ref('UNSET_SECRET') },
          ],
        },
      }),
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          variable: 'FEISHU_CONNECTION',
          message: expect.stringContaining('webhook only'),
        }),
        expect.objectContaining({
          variable: 'config file: feishu.apps.0.appId',
          message: `${envApp.FEISHU_APP_ID} is configured twice`,
        }),
        expect.objectContaining({ variable: 'UNSET_SECRET' }),
        expect.objectContaining({
          variable: 'config file: feishu.apps.1.encryptKey',
          message: expect.stringContaining('Encrypt Key'),
        }),
      ]),
    );
  });

  it('takes Feishu approvers that name their tenant, and names one that is neither form', () => {
    const { config } = loadConfig({
      ...envApp,
      BUTLER_CONFIG: writeConfig({ approvers: { feishu: ['2ca1d211f64f6438/ou_olga', 'ou_ben'] } }),
    });
    expect(config.file.approvers.feishu).toEqual(['2ca1d211f64f6438/ou_olga', 'ou_ben']);
    const issues = issuesOf({
      ...envApp,
      BUTLER_CONFIG: writeConfig({ approvers: { feishu: ['tenant/U0OLGA'] } }),
    });
    expect(issues).toEqual([
      {
        variable: 'config file: approvers.feishu',
        message: 'tenant/U0OLGA: write a Feishu approver ou_… or <tenant key>/ou_…',
      },
    ]);
  });

  it('needs BUTLER_SECRET_KEY for a store app on a shared database: its tenant tokens are sealed', () => {
    const issues = issuesOf({
      ...envApp,
      FEISHU_APP_TYPE: 'isv',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
    });
    expect(issues.map((issue) => issue.variable)).toContain('BUTLER_SECRET_KEY');
  });
});
