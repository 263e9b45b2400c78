import type { Platform } from './events.js';

/** A sealed secret as stored: the ciphertext and the id of the key that sealed it (secret-box.ts). */
export interface SealedSecret {
  keyId: string;
  value: string;
}

/**
 * A workspace Butler was installed in over OAuth: who Butler is there, what the install granted, and its bot
 * token, sealed (never readable without BUTLER_SECRET_KEY). `token` is undefined once uninstalled.
 */
export interface InstallationRecord {
  platform: Platform;
  /** As the platform keys an installation (Slack: `T…`, or `E…` for an org-wide install). */
  key: string;
  teamId: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
  botUserId: string;
  botId: string;
  scopes: string;
  installerId: string | undefined;
  token: SealedSecret | undefined;
  /** With token rotation: the refresh token, sealed, and when the bot token expires. */
  refreshToken: SealedSecret | undefined;
  tokenExpiresAt: Date | undefined;
  /** Until when a process holds the refresh lease (or backs off after a failed refresh). */
  refreshingUntil: Date | undefined;
  installedAt: Date;
  uninstalledAt: Date | undefined;
  lastError: string | undefined;
}

export type NewInstallation = Omit<
  InstallationRecord,
  'installedAt' | 'uninstalledAt' | 'lastError' | 'token' | 'refreshingUntil'
> & {
  token: SealedSecret;
};

/** A rotated bot token: the new token and refresh token, sealed with one key, and the new expiry. */
export interface RotatedTokens {
  token: SealedSecret;
  refreshToken: SealedSecret;
  tokenExpiresAt: Date;
}

export interface InstallationRepository {
  /** Stores an install, or a re-install over an earlier one: active again, the new token, no last error. */
  save(installation: NewInstallation): Promise<void>;
  get(platform: Platform, key: string): Promise<InstallationRecord | undefined>;
  /** Every installation of `platform`, uninstalled ones included, oldest first. */
  list(platform: Platform): Promise<InstallationRecord[]>;
  /** Uninstalled or revoked: the token is deleted. False when it was not active. */
  deactivate(platform: Platform, key: string): Promise<boolean>;
  /** The platform refused the token `sealed`: kept until the next install; nothing when the token changed since. */
  noteError(platform: Platform, key: string, error: string, sealed: string): Promise<void>;
  /**
   * Takes the installation's refresh lease for `leaseMs` when nobody holds it: the record (to refresh) for the
   * one caller that got it, undefined for the others, which wait for its outcome.
   */
  claimRefresh(platform: Platform, key: string, leaseMs: number): Promise<InstallationRecord | undefined>;
  /** Stores the rotated tokens and gives the lease back (nothing for an installation removed meanwhile). */
  saveRotated(platform: Platform, key: string, rotated: RotatedTokens): Promise<void>;
  /**
   * Ends the refresh lease taken until `claimedUntil` (nothing when another process holds it since) `afterMs` from
   * now: 0 gives it back, more backs off after a failed refresh.
   */
  releaseRefresh(platform: Platform, key: string, claimedUntil: Date, afterMs: number): Promise<void>;
}
