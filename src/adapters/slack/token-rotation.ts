import { WebClient } from '@slack/web-api';
import type { SlackInstallConfig } from '../../config/types.js';
import type { InstallationRecord } from '../../core/contracts/installation-records.js';
import type { Logger } from '../../core/contracts/logger.js';
import { clientFetch } from '../../http/client-fetch.js';
import { isRecord } from './parse.js';
import { SlackApiError, toSlackApiError } from './slack-api-error.js';
import { toSlackSdkLogger } from './slack-logger.js';

/** Refresh a rotating token this long before it expires (Slack's last 12 hours; a refresh takes a second). */
export const refreshAheadMs = 10 * 60_000;
/** One process refreshes an installation at a time; a lease it does not give back lapses after this. */
const leaseMs = 30_000;
/** How long another process's refresh is waited for, reading the row again every so often. */
const waitMs = 15_000;
const pollMs = 250;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Where a rotating installation's tokens are read, leased and stored, and the key that seals them. */
export interface RotationStore {
  get(key: string): Promise<InstallationRecord | undefined>;
  claim(key: string, leaseMs: number): Promise<InstallationRecord | undefined>;
  release(key: string): Promise<void>;
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
    this.client = new WebClient(undefined, {
      slackApiUrl: options.apiUrl,
      timeout: 10_000,
      retryConfig: { retries: 0 },
      logger: toSlackSdkLogger(options.logger),
      fetch: clientFetch,
    });
  }

  /** Whether `record`'s bot token expires soon enough to refresh now. */
  due(record: InstallationRecord): boolean {
    const expiresAt = record.tokenExpiresAt?.getTime();
    return expiresAt !== undefined && expiresAt - this.options.now() <= refreshAheadMs;
  }

  /** The installation with a token that is not due, refreshed here or by another process; throws when neither. */
  async fresh(record: InstallationRecord): Promise<InstallationRecord> {
    if (!this.due(record)) return record;
    const { store } = this.options;
    const claimed = await store.claim(record.key, leaseMs);
    if (claimed) {
      // Refreshed by another process between the read and the claim: nothing to do.
      if (!this.due(claimed)) {
        await store.release(record.key);
        return claimed;
      }
      try {
        await this.refresh(claimed);
      } catch (error) {
        // The next payload tries again at once instead of waiting out the lease.
        await store.release(record.key).catch(() => {});
        throw error;
      }
    } else {
      for (const started = this.options.now(); this.options.now() - started < waitMs; ) {
        await sleep(pollMs);
        const again = await store.get(record.key);
        if (again && !this.due(again)) return again;
      }
    }
    const refreshed = await store.get(record.key);
    if (!refreshed || this.due(refreshed)) throw new SlackApiError('oauth.v2.access', 'token_not_refreshed');
    return refreshed;
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
