import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSecretKeyText, parseSecretKey, type SecretKey } from '../core/connections/secret-box.js';
import type { ConfigIssue } from '../core/contracts/errors.js';

/**
 * The keys that seal secrets at rest (people's OAuth tokens): `BUTLER_SECRET_KEY`, 32 bytes as base64 or hex,
 * the first sealing and every one listed after it still opening what it sealed (rotation: put the new key
 * first, keep the old one after a comma until every connection was refreshed or reconnected). On the embedded
 * database a key is generated once into the data directory, with a warning: fine on one machine, not for a
 * team's server, where the key must live apart from the database.
 */

export const keyFileName = 'secret.key';

export function resolveSecretKeys(
  input: {
    text: string | undefined;
    embedded: boolean;
    dataDir: string;
    /** Something configured cannot work without a key. */
    needed: boolean;
    /** Something would use a key, and works less without one: made on the embedded database only. */
    wanted?: boolean;
  },
  issues: ConfigIssue[],
  warnings: string[],
): SecretKey[] | undefined {
  if (input.text !== undefined) {
    const keys = input.text.split(',').map((part) => parseSecretKey(part));
    if (keys.some((key) => key === undefined)) {
      issues.push({
        variable: 'BUTLER_SECRET_KEY',
        message:
          'each key must be 32 bytes as base64 (44 characters) or hex (64 digits); make one with `openssl rand -base64 32`',
      });
      return undefined;
    }
    return keys as SecretKey[];
  }
  if (!input.needed && !(input.wanted && input.embedded)) return undefined;
  if (!input.embedded) {
    issues.push({
      variable: 'BUTLER_SECRET_KEY',
      message:
        'required with DATABASE_URL when a server uses OAuth or Slack installs over OAuth: it encrypts the tokens at rest (`openssl rand -base64 32`)',
    });
    return undefined;
  }
  const file = join(input.dataDir, keyFileName);
  if (!existsSync(file)) {
    mkdirSync(input.dataDir, { recursive: true });
    writeFileSync(file, `${newSecretKeyText()}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const key = parseSecretKey(readFileSync(file, 'utf8'));
  if (!key) {
    issues.push({ variable: 'BUTLER_SECRET_KEY', message: `unset, and ${file} holds no valid key` });
    return undefined;
  }
  warnings.push(
    `BUTLER_SECRET_KEY unset: tokens are encrypted with a key generated in ${file}; set BUTLER_SECRET_KEY for a shared server`,
  );
  return [key];
}
