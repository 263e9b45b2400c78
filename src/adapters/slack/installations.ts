import type { InstallationRecord } from '../../core/contracts/installation-records.js';
import type { BotIdentity } from './normalize.js';
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

/** Slack's answers that say it could not refresh now, but may later: anything else refuses the installation. */
const transient = (slackError: string) =>
  slackError === 'request_failed' || slackError === 'ratelimited' || slackError.startsWith('http_');

/**
 * The installations Butler serves, each with parts of its own (workspace.ts): the bot token's workspace (one
 * token, `SLACK_BOT_TOKEN`) and those installed over OAuth, read from the database when first needed. A key is
 * a team `T…`, or the enterprise `E…` of an org-wide install (Enterprise Grid).
 */
export class SlackInstallations {
  private fixed: { key: string; enterpriseId: string | undefined; workspace: SlackWorkspace } | undefined;
  private readonly loaded = new Map<string, Loaded>();

  constructor(
    private readonly context: WorkspaceContext,
    private readonly stored: StoredInstallations | undefined,
    /** An installation's health changed (its token refused): /readyz reads it again. */
    private readonly changed: () => void = () => {},
    /** Installations whose app rotates tokens are refreshed ahead of expiry (token-rotation.ts). */
    private readonly rotation?: TokenRotation,
  ) {}

  /** The bot token's workspace, once auth.test named it. */
  serveFixed(workspace: SlackWorkspace, identity: BotIdentity): void {
    this.fixed = { key: identity.teamId, enterpriseId: identity.enterpriseId, workspace };
  }

  /** The installation for `key`, or undefined when Butler is not (or no longer) installed there. */
  async forKey(key: string): Promise<SlackWorkspace | undefined> {
    const { fixed } = this;
    if (fixed && (key === fixed.key || key === fixed.enterpriseId)) return fixed.workspace;
    if (!this.stored) return undefined;
    const now = this.context.now();
    const known = this.loaded.get(key);
    const due = (record: InstallationRecord) => this.rotation?.due(record) ?? false;
    if (known && now - known.checkedAt < recheckMs && !due(known.record)) return known.workspace;
    const read = await this.stored.repository.get('slack', key);
    const record = read && due(read) ? await this.refreshed(read) : read;
    // A token Slack refused stays refused (its workspace was deleted or its app removed): not served until the
    // workspace installs Butler again, rather than every turn failing the same way.
    if (!record?.token || record.uninstalledAt || record.lastError) {
      this.loaded.delete(key);
      return undefined;
    }
    if (known && known.sealed === record.token.value) {
      known.checkedAt = now;
      known.record = record;
      return known.workspace;
    }
    const token = this.stored.secrets.open(record.token, tokenContext(key));
    const identity = {
      userId: record.botUserId,
      botId: record.botId,
      teamId: record.teamId ?? key,
      ...(record.enterpriseId ? { enterpriseId: record.enterpriseId } : {}),
    };
    const workspace = createSlackWorkspace(this.context, token, identity, (slackError) =>
      this.refused(key, slackError),
    );
    this.loaded.set(key, { workspace, sealed: record.token.value, checkedAt: now, record });
    return workspace;
  }

  /** A rotating installation with a fresh token; undefined once Slack refused the refresh token. */
  private async refreshed(record: InstallationRecord): Promise<InstallationRecord | undefined> {
    try {
      return await this.rotation?.fresh(record);
    } catch (error) {
      if (!(error instanceof SlackApiError) || transient(error.slackError)) throw error;
      this.refused(record.key, error.slackError);
      return undefined;
    }
  }

  async serves(key: string): Promise<boolean> {
    return (await this.forKey(key)) !== undefined;
  }

  /** Uninstalled or revoked: forgotten here at once (other processes within a minute). */
  forget(key: string): void {
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

  /** Slack refused the installation's token: marked so (for /readyz, and every process) and no longer served. */
  private refused(key: string, slackError: string): void {
    this.loaded.delete(key);
    const { logger } = this.context;
    logger.warn({ platform: 'slack', workspace: key, slackError }, 'Slack refused an installation’s token');
    this.stored?.repository.noteError('slack', key, slackError).then(this.changed, (error: unknown) => {
      logger.warn(
        { platform: 'slack', workspace: key, err: error },
        'could not mark the installation refused',
      );
    });
  }
}
