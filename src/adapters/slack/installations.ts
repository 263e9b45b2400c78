import type { InstallationRecord } from '../../core/contracts/installation-records.js';
import { type BotIdentity, installationKeyOfIdentity } from './normalize.js';
import { type StoredInstallations, tokenContext } from './sealed-installations.js';
import { SlackApiError } from './slack-api-error.js';
import type { TokenRotation } from './token-rotation.js';
import { createSlackWorkspace, type SlackWorkspace, type WorkspaceContext } from './workspace.js';

/** How long a process trusts what it read of an installation before reading it again (another process may
 * have seen it uninstalled, or re-installed with a new token). */
const recheckMs = 60_000;

interface Loaded {
  workspace: SlackWorkspace;
  sealed: string;
  checkedAt: number;
  record: InstallationRecord;
}

/** The refresh token itself was refused: only a new install gives the workspace a token again. */
const refreshRefused = new Set(['invalid_refresh_token', 'invalid_grant', 'token_revoked']);

/**
 * The installations Butler serves, each with parts of its own (workspace.ts): the bot token's workspace (one
 * token, `SLACK_BOT_TOKEN`) and those installed over OAuth, read from the database when first needed. A key is
 * a team `T…`, or the enterprise `E…` of an org-wide install (Enterprise Grid). One process keeps one set of
 * parts per installation (one pacer per workspace), built once however many payloads ask at the same time.
 */
export class SlackInstallations {
  private fixed: { key: string; workspace: SlackWorkspace } | undefined;
  private readonly loaded = new Map<string, Loaded>();
  private readonly loading = new Map<string, Promise<SlackWorkspace | undefined>>();
  /** Installations whose token is being refreshed in the background, while their current one still works. */
  private readonly refreshing = new Set<string>();
  /** Bumped by `forget`: a load that began before it does not put the old installation back. */
  private generation = 0;

  constructor(
    private readonly context: WorkspaceContext,
    private readonly stored: StoredInstallations | undefined,
    /** An installation's health changed (its token refused): /readyz reads it again. */
    private readonly changed: () => void = () => {},
    /** Installations whose app rotates tokens are refreshed ahead of expiry (token-rotation.ts). */
    private readonly rotation?: TokenRotation,
  ) {}

  /** The bot token's workspace, once auth.test named it (an org-wide token is keyed by its enterprise). */
  serveFixed(workspace: SlackWorkspace, identity: BotIdentity): void {
    this.fixed = { key: installationKeyOfIdentity(identity), workspace };
  }

  /**
   * The installation for `key`, its token fresh, or undefined when Butler is not (or no longer) installed there.
   * With the bot token alone every conversation is that token's, as it always was.
   */
  async forKey(key: string): Promise<SlackWorkspace | undefined> {
    const { fixed } = this;
    if (fixed && (key === fixed.key || !this.stored)) return fixed.workspace;
    if (!this.stored) return undefined;
    const known = this.loaded.get(key);
    const expired = known && this.rotation?.expired(known.record);
    if (known && this.context.now() - known.checkedAt < recheckMs && !expired) {
      if (this.rotation?.due(known.record)) this.refreshLater(known.record);
      return known.workspace;
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = this.load(key).finally(() => this.loading.delete(key));
    this.loading.set(key, load);
    return load;
  }

  /**
   * Whether Butler serves `key`, for the gate in front of Bolt: what the database says, with no token opened or
   * refreshed (that waits for a listener, after the acknowledgement). `uninstall` events are let through for any
   * installation Butler knows, whatever its health, so that removing the app always ends it.
   */
  async serves(key: string, options: { uninstall: boolean }): Promise<boolean> {
    if (this.fixed?.key === key) return true;
    if (!this.stored) return false;
    if (this.loaded.has(key) && !options.uninstall) return true;
    const record = await this.stored.repository.get('slack', key);
    if (!record) return false;
    if (options.uninstall) return record.token !== undefined && !record.uninstalledAt;
    return record.token !== undefined && !record.uninstalledAt && !record.lastError;
  }

  /** Who Butler is in installation `key`, from what was stored (no token needed): for `tokens_revoked`. */
  async botUserOf(key: string): Promise<string | undefined> {
    if (this.fixed?.key === key) return this.fixed.workspace.identity()?.userId;
    return (await this.stored?.repository.get('slack', key))?.botUserId;
  }

  /** Uninstalled or revoked: forgotten here at once (other processes within a minute). */
  forget(key: string): void {
    this.generation += 1;
    this.loaded.delete(key);
  }

  /** How many workspaces Butler serves now, and how many installed ones have a token Slack refused (/readyz). */
  async health(): Promise<{ served: number; refused: number }> {
    const stored = this.stored ? await this.stored.repository.list('slack') : [];
    const installed = stored.filter((record) => record.token && !record.uninstalledAt);
    const keys = new Set(installed.filter((record) => !record.lastError).map((record) => record.key));
    if (this.fixed) keys.add(this.fixed.key);
    return { served: keys.size, refused: installed.filter((record) => record.lastError).length };
  }

  private async load(key: string): Promise<SlackWorkspace | undefined> {
    const stored = this.stored;
    if (!stored) return undefined;
    const generation = this.generation;
    // A token Slack refused stays refused (its workspace was deleted or its app removed): not served until the
    // workspace installs Butler again, rather than every turn failing the same way.
    const usable = (record: InstallationRecord | undefined) =>
      record?.token && !record.uninstalledAt && !record.lastError ? record : undefined;
    let record = usable(await stored.repository.get('slack', key));
    // A rotating token is refreshed ahead of its expiry in the background; only an expired one is waited for.
    if (record && this.rotation?.expired(record)) record = usable(await this.refreshed(record));
    else if (record && this.rotation?.due(record)) this.refreshLater(record);
    if (!record?.token) {
      this.loaded.delete(key);
      return undefined;
    }
    // Installed or removed again while this was read: read what holds now.
    if (generation !== this.generation) return this.load(key);
    const now = this.context.now();
    const known = this.loaded.get(key);
    if (known && known.sealed === record.token.value) {
      known.checkedAt = now;
      known.record = record;
      return known.workspace;
    }
    const sealed = record.token.value;
    const token = stored.secrets.open(record.token, tokenContext(key));
    const identity = {
      userId: record.botUserId,
      botId: record.botId,
      teamId: record.teamId ?? key,
      ...(record.enterpriseId ? { enterpriseId: record.enterpriseId } : {}),
    };
    const workspace = createSlackWorkspace(this.context, token, identity, (slackError) =>
      this.refused(key, slackError, sealed),
    );
    this.loaded.set(key, { workspace, sealed, checkedAt: now, record });
    return workspace;
  }

  /** Refreshes `record`'s token beside the traffic that still uses the current one; the next read takes the new. */
  private refreshLater(record: InstallationRecord): void {
    const { key } = record;
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    this.refreshed(record)
      .then((fresh) => {
        if (fresh?.token?.value !== this.loaded.get(key)?.sealed) this.loaded.delete(key);
      })
      .catch((error: unknown) => {
        this.context.logger.warn(
          { platform: 'slack', workspace: key, err: error },
          'Slack token refresh failed; tried again',
        );
      })
      .finally(() => this.refreshing.delete(key));
  }

  /**
   * A rotating installation with a fresh token. Only Slack's refusal of the refresh token itself ends the
   * installation (undefined); anything else (a timeout, another process still refreshing) is thrown, to be tried
   * again with the next payload.
   */
  private async refreshed(record: InstallationRecord): Promise<InstallationRecord | undefined> {
    try {
      return await this.rotation?.fresh(record);
    } catch (error) {
      if (!(error instanceof SlackApiError) || !refreshRefused.has(error.slackError)) throw error;
      if (record.token) this.refused(record.key, error.slackError, record.token.value);
      return undefined;
    }
  }

  /**
   * Slack refused the installation's token `sealed`: marked so (for /readyz, and every process) and no longer
   * served. A mark for a token the installation no longer has (reinstalled meanwhile) is not made.
   */
  private refused(key: string, slackError: string, sealed: string): void {
    if (this.loaded.get(key)?.sealed === sealed) this.loaded.delete(key);
    const { logger } = this.context;
    logger.warn({ platform: 'slack', workspace: key, slackError }, 'Slack refused an installation’s token');
    this.stored?.repository
      .noteError('slack', key, slackError, sealed)
      .then(this.changed, (error: unknown) => {
        logger.warn(
          { platform: 'slack', workspace: key, err: error },
          'could not mark the installation refused',
        );
      });
  }
}
