import type { SecretBox } from '../../core/connections/secret-box.js';
import type { InstallationRepository } from '../../core/contracts/installation-records.js';
import type { RotationStore } from './token-rotation.js';

/** Installations sealed in the database, and the key that opens them. */
export interface StoredInstallations {
  repository: InstallationRepository;
  secrets: SecretBox;
}

/** What a sealed bot token is bound to: a row's ciphertext copied into another row does not open there. */
export const tokenContext = (key: string) => `slack installation ${key}`;
/** The same for a rotating installation's refresh token. */
export const refreshContext = (key: string) => `slack installation refresh ${key}`;

/** Token rotation's reads and writes of Slack installations, sealing what it stores. */
export function rotationStore({ repository, secrets }: StoredInstallations): RotationStore {
  return {
    get: (key) => repository.get('slack', key),
    claim: (key, leaseMs) => repository.claimRefresh('slack', key, leaseMs),
    release: (key, claimedUntil, afterMs) => repository.releaseRefresh('slack', key, claimedUntil, afterMs),
    save: (key, tokens) =>
      repository.saveRotated('slack', key, {
        token: secrets.seal(tokens.token, tokenContext(key)),
        refreshToken: secrets.seal(tokens.refreshToken, refreshContext(key)),
        tokenExpiresAt: tokens.expiresAt,
      }),
    openRefreshToken(record) {
      if (!record.refreshToken) throw new Error(`installation ${record.key} has no refresh token`);
      return secrets.open(record.refreshToken, refreshContext(record.key));
    },
  };
}
