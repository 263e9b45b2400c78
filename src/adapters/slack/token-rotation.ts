import { WebClient } from '@slack/web-api';
import type { SlackInstallConfig } from '../../config/types.js';
import type { InstallationRecord } from '../../core/contracts/installation-records.js';
import type { Logger } from '../../core/contracts/logger.js';
import { isRecord } from './parse.js';
import { slackClientOptions } from './slack-api.js';
import { SlackApiError, toSlackApiError } from './slack-api-error.js';

/** Refresh a rotating token this long before it expires (Slack's last 12 hours; a refresh takes a second). */
const refreshAheadMs = 10 * 60_000;
/** One process refreshes an installation at a time; a lease it does not give back lapses after this. */
const leaseMs = 30_000;
/** How long another process's refresh is waited for (an expired token only), reading the row again meanwhile. */
const waitMs = 15_000;
/** After a failed refresh the lease is held this long: tried again soon, not by every payload of every process. */
const backoffMs = 5_000;
const pollMs = 250;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Where a rotating installation's tokens are read, leased and stored, and the key that seals them. */
export interface RotationStore {
  get(key: string): Promise<InstallationRecord | undefined>;
  claim(key: string, leaseMs: number): Promise<InstallationRecord | undefined>;
  release(key: string, claimedUntil: Date, afterMs: number): Promise<void>;
  save(key: string, tokens: { token: string; refreshToken: string; expiresAt: Date }): Promise<void>;
  openRefreshToken(record: InstallationRecord): string;
}

/**
 * Slack's token rotation for installations that turned it on: a bot token lives 12 hours; ahead of its expiry
 * one process (the one that takes the installation's lease in the database) exchanges the refresh token with
 * `oauth.v2.access` (`grant_type=refresh_token`, through SLACK_API_URL, 10 s) and stores both new tokens
 * sealed; the others wait for its result instead of refreshing too (a refresh token works once).
 */
export class TokenRotation {
  private readonly client: WebClient;

  constructor(
    private readonly options: {
      install: SlackInstallConfig;
      apiUrl: string;
      store: RotationStore;
      logger: Logger;
      now: () => number;
    },
  ) {
    // Once, within 10 s: a failure is tried again by the next caller, after the back-off.
    this.client = new WebClient(
      undefined,
      slackClientOptions({ apiUrl: options.apiUrl, logger: options.logger, retries: 0 }),
    );
  }

  /** Whether `record`'s bot token expires soon enough to refresh now. */
  due(record: InstallationRecord): boolean {
    const expiresAt = record.tokenExpiresAt?.getTime();
    return expiresAt !== undefined && expiresAt - this.options.now() <= refreshAheadMs;
  }

  /** Whether the bot token has expired: only then must a caller wait for a new one. */
  expired(record: InstallationRecord): boolean {
    const expiresAt = record.tokenExpiresAt?.getTime();
    return expiresAt !== undefined && expiresAt <= this.options.now();
  }

  /**
   * The installation with a token that is not due: refreshed here when this process takes the lease, else by the
   * process that holds it (waited for). A removed or refused installation comes back as it is, for the caller to
   * see. Throws when the refresh failed, or took too long elsewhere.
   */
  async fresh(record: InstallationRecord): Promise<InstallationRecord> {
    if (!this.due(record)) return record;
    const { store, now } = this.options;
    const ended = (again: InstallationRecord) =>
      again.uninstalledAt !== undefined || again.lastError !== undefined;
    for (const started = now(); ; await sleep(pollMs)) {
      const claimed = await store.claim(record.key, leaseMs);
      if (claimed?.refreshingUntil) {
        const until = claimed.refreshingUntil;
        if (ended(claimed) || !this.due(claimed)) {
          await store.release(record.key, until, 0).catch(() => {});
          return claimed;
        }
        try {
          await this.refresh(claimed);
        } catch (error) {
          await store.release(record.key, until, backoffMs).catch(() => {});
          throw error;
        }
        return (await store.get(record.key)) ?? claimed;
      }
      const again = await store.get(record.key);
      if (!again || ended(again) || !this.due(again)) return again ?? record;
      if (now() - started > waitMs) throw new SlackApiError('oauth.v2.access', 'token_not_refreshed');
    }
  }

  private async refresh(record: InstallationRecord): Promise<void> {
    const { install, store, logger } = this.options;
    let result: unknown;
    try {
      result = await this.client.oauth.v2.access({
        client_id: install.clientId,
        client_secret: install.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: store.openRefreshToken(record),
      });
    } catch (error) {
      throw toSlackApiError('oauth.v2.access', error);
    }
    const answer = isRecord(result) ? result : {};
    const { access_token: token, refresh_token: refreshToken, expires_in: expiresIn } = answer;
    if (typeof token !== 'string' || typeof refreshToken !== 'string' || typeof expiresIn !== 'number')
      throw new SlackApiError('oauth.v2.access', 'missing_rotated_token');
    await store.save(record.key, {
      token,
      refreshToken,
      expiresAt: new Date(this.options.now() + expiresIn * 1000),
    });
    logger.info({ platform: 'slack', workspace: record.key }, 'Slack bot token rotated');
  }
}
