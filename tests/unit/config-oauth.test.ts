import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { parseSecretKey, SecretBox } from '../../src/core/connections/index.js';
import { ConfigError } from '../../src/core/contracts/errors.js';

/** MCP servers behind OAuth in the config file, the secret key that seals their tokens, and that key itself. */

function load(file: unknown, env: Record<string, string> = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-oauth-config-'));
  writeFileSync(join(directory, 'butler.config.yaml'), JSON.stringify(file));
  return { directory, ...loadConfig({ BUTLER_DATA_DIR: join(directory, 'data'), ...env }, directory) };
}

function issues(file: unknown, env: Record<string, string> = {}) {
  try {
    load(file, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const server = (oauth: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  mcpServers: [{ name: 'tickets', url: 'https://mcp.example.com/mcp', oauth, ...extra }],
});
const publicUrl = { BUTLER_PUBLIC_URL: 'https://butler.example.com' };
const key = 'a'.repeat(64);

describe('MCP servers behind OAuth', () => {
  it('reads the server, keeps a client secret out of logs, and seals with the configured key', () => {
    const { config } = load(
      server({ identity: 'person', clientId: 'butler', clientSecret: 's3cret-value' }),
      {
        ...publicUrl,
        DATABASE_URL: 'postgres://db.example.com/butler',
        BUTLER_SECRET_KEY: key,
      },
    );
    expect(config.mcpServers[0]).toMatchObject({
      oauth: { identity: 'person', clientId: 'butler', clientSecret: 's3cret-value' },
      secrets: ['s3cret-value'],
    });
    expect(config.secretKeys?.map((entry) => entry.id)).toEqual([parseSecretKey(key)?.id]);
  });

  it('names what is missing or wrong', () => {
    expect(issues(server({ identity: 'person' }), { DATABASE_URL: 'postgres://db.example.com/b' })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ variable: 'BUTLER_PUBLIC_URL' }),
        expect.objectContaining({ variable: 'BUTLER_SECRET_KEY' }),
      ]),
    );
    expect(issues(server({ identity: 'person' }), { ...publicUrl, BUTLER_SECRET_KEY: 'short' })).toEqual([
      expect.objectContaining({
        variable: 'BUTLER_SECRET_KEY',
        message: expect.stringContaining('32 bytes'),
      }),
    ]);
    const wrong = issues(
      {
        ...server({ identity: 'everyone', clientSecret: 'x' }, { headers: { Authorization: 'Bearer x' } }),
        tools: [
          {
            name: 'me',
            description: 'me',
            risk: 'low',
            http: { url: 'https://x.example.com', auth: { connection: 'nope' } },
          },
        ],
      },
      publicUrl,
    );
    expect(wrong.map((issue) => issue.variable).join('\n')).toMatch(/mcpServers\.0\.oauth/);
    const stdio = issues(
      { mcpServers: [{ name: 'files', command: 'x', oauth: { identity: 'person' } }] },
      publicUrl,
    );
    expect(JSON.stringify(stdio)).toContain('only for an HTTP server');
    const tool = issues(
      {
        ...server({ identity: 'person' }),
        tools: [
          {
            name: 'me',
            description: 'me',
            risk: 'low',
            http: { url: 'https://x.example.com', auth: { connection: 'nope' } },
          },
        ],
      },
      { ...publicUrl, BUTLER_SECRET_KEY: key },
    );
    expect(tool).toEqual([
      expect.objectContaining({ variable: 'config file: tools.0.http.auth.connection' }),
    ]);
  });

  it('generates a key file of its own on the embedded database, once, readable by its owner only', () => {
    const first = load(server({ identity: 'shared' }), publicUrl);
    const file = join(first.directory, 'data', 'secret.key');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.warnings.join('\n')).toContain('BUTLER_SECRET_KEY unset');
    const again = loadConfig(
      { BUTLER_DATA_DIR: join(first.directory, 'data'), ...publicUrl },
      first.directory,
    );
    expect(again.config.secretKeys?.[0]?.id).toBe(first.config.secretKeys?.[0]?.id);
    expect(readFileSync(file, 'utf8').trim()).toHaveLength(44);
  });
});

describe('the secret box', () => {
  const current = parseSecretKey('b'.repeat(64));
  const old = parseSecretKey(Buffer.alloc(32, 7).toString('base64'));
  if (!current || !old) throw new Error('test keys do not parse');

  it('opens what it sealed, in its context only, and with a rotated key list', () => {
    const sealed = new SecretBox([old]).seal('refresh-token-value', 'connection\0tickets\0person:olga');
    expect(sealed.value).not.toContain('refresh-token-value');
    const rotated = new SecretBox([current, old]);
    expect(rotated.open(sealed, 'connection\0tickets\0person:olga')).toBe('refresh-token-value');
    expect(() => rotated.open(sealed, 'connection\0tickets\0person:bob')).toThrow(/does not open/);
    expect(() => new SecretBox([current]).open(sealed, 'connection\0tickets\0person:olga')).toThrow(
      /no key with id/,
    );
    // One bit of the ciphertext flipped (`v1.<nonce>.<ciphertext>.<tag>`): a whole byte, never base64's padding bits.
    const [version, nonce, body = '', tag] = sealed.value.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    const tampered = { ...sealed, value: [version, nonce, flipped.toString('base64url'), tag].join('.') };
    expect(() => rotated.open(tampered, 'connection\0tickets\0person:olga')).toThrow(/does not open/);
    expect(rotated.seal('x', 'c').keyId).toBe(current.id);
  });

  it('refuses a value whose tag was cut short (GCM checks only as many tag bytes as it is given)', () => {
    const box = new SecretBox([current]);
    const sealed = box.seal('access-token-value', 'connection\0tickets\0person:olga');
    const [version, nonce, body, tag = ''] = sealed.value.split('.');
    for (const length of [4, 12, 15]) {
      const cut = Buffer.from(tag, 'base64url').subarray(0, length).toString('base64url');
      const value = [version, nonce, body, cut].join('.');
      expect(() => box.open({ ...sealed, value }, 'connection\0tickets\0person:olga')).toThrow(
        /does not open/,
      );
    }
  });
});
