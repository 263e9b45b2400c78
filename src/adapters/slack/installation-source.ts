import type { Logger } from '../../core/contracts/logger.js';
import { isRecord } from './parse.js';

/**
 * Which installation a Slack payload is for, read as Bolt's `authorize` reads it (App.ts `buildSource`): an
 * org-wide install (Enterprise Grid) is keyed by its enterprise, any other by its workspace.
 */
export interface InstallationSource {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
}

function text(record: unknown, key: string): string | undefined {
  if (!isRecord(record)) return undefined;
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Events carry the installation on the envelope (`team_id`, `enterprise_id`, `authorizations`); slash commands as
 * form fields (`is_enterprise_install` is the string "true"); interactions as `team`/`enterprise` objects, where a
 * view's `app_installed_team_id` names the installing workspace even when the person is from another one.
 */
export function installationSourceOf(body: Record<string, unknown>): InstallationSource {
  if (body.type === 'event_callback') {
    // The authorization names the installation that receives the event (in a Slack Connect channel `team_id` may
    // be another organization's); Slack sends `app_uninstalled` and `tokens_revoked` without one.
    const authorization = Array.isArray(body.authorizations) ? body.authorizations.find(isRecord) : undefined;
    return {
      teamId: text(authorization, 'team_id') ?? text(body, 'team_id'),
      enterpriseId: text(authorization, 'enterprise_id') ?? text(body, 'enterprise_id'),
      isEnterpriseInstall:
        body.is_enterprise_install === true || authorization?.is_enterprise_install === true,
    };
  }
  if (typeof body.command === 'string') {
    return {
      teamId: text(body, 'team_id'),
      enterpriseId: text(body, 'enterprise_id'),
      isEnterpriseInstall: body.is_enterprise_install === 'true',
    };
  }
  return {
    teamId: text(body.view, 'app_installed_team_id') ?? text(body.team, 'id') ?? text(body.user, 'team_id'),
    enterpriseId: text(body.enterprise, 'id'),
    isEnterpriseInstall: body.is_enterprise_install === true,
  };
}

/** The key an installation is stored and looked up by: `E…` for an org-wide install, else `T…`. */
export function installationKeyOf(source: InstallationSource): string | undefined {
  return source.isEnterpriseInstall ? source.enterpriseId : source.teamId;
}

const unknownLogEveryMs = 60 * 60_000;

/** `app_uninstalled` and `tokens_revoked`: the events that end an installation. */
function endsInstallation(body: Record<string, unknown>): boolean {
  const type = isRecord(body.event) ? body.event.type : undefined;
  return body.type === 'event_callback' && (type === 'app_uninstalled' || type === 'tokens_revoked');
}

/**
 * The gate in front of Bolt: a payload for a workspace Butler is not installed in is acknowledged (a refusal
 * would make Slack retry, then disable the app's events) and dropped before any listener, model or Web API
 * call. Each unknown installation is logged once an hour.
 */
export class InstallationGate {
  private readonly lastLogged = new Map<string, number>();

  constructor(
    private readonly options: {
      /**
       * Whether Butler serves the installation `key`; `uninstall` for the events that end one, which are let in
       * for any installation Butler knows, so that removing the app always ends it.
       */
      serves: (key: string, uninstall: boolean) => boolean | Promise<boolean>;
      logger: Logger;
      now: () => number;
    },
  ) {}

  async admits(body: Record<string, unknown>): Promise<boolean> {
    const source = installationSourceOf(body);
    const key = installationKeyOf(source);
    const ending = endsInstallation(body);
    if (key !== undefined && (await this.options.serves(key, ending))) return true;
    // Slack sends the events that end an installation without `authorizations`: an org-wide one is its enterprise's.
    if (ending && source.enterpriseId && (await this.options.serves(source.enterpriseId, true))) return true;
    this.noteUnknown(key ?? 'none', source);
    return false;
  }

  private noteUnknown(key: string, source: InstallationSource): void {
    const now = this.options.now();
    const last = this.lastLogged.get(key);
    if (last !== undefined && now - last < unknownLogEveryMs) return;
    this.lastLogged.set(key, now);
    this.options.logger.warn(
      { platform: 'slack', team: source.teamId, enterprise: source.enterpriseId },
      'Slack payload from a workspace Butler is not installed in: acknowledged and ignored (logged once an hour)',
    );
  }
}
