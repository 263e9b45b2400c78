/**
 * Slack's OAuth v2 for the fake Slack (fake-slack-api.ts): `oauth.v2.access` turns a code the test issued (as
 * Slack would after a person approved the install) into that workspace's own bot token, once, for the right
 * client and redirect URI; `auth.test` then answers for each issued token as the workspace it belongs to.
 * Docs: docs.slack.dev/reference/methods/oauth.v2.access and auth.test.
 */

type Answer = Record<string, unknown>;

export interface FakeWorkspaceInstall {
  teamId: string;
  teamName?: string;
  botUserId: string;
  botId: string;
  /** The person who approved the install. */
  installerId: string;
  enterpriseId?: string;
  /** An org-wide install (Enterprise Grid): `team` is null. */
  isEnterpriseInstall?: boolean;
  /** Token rotation on: a refresh token comes with the bot token, which expires after `expiresIn` seconds. */
  rotating?: { expiresIn: number };
}

export interface FakeSlackOAuth {
  clientId: string;
  clientSecret: string;
  /** The redirect URI the app is configured with; a code is exchanged only with it. */
  redirectUri: string;
  /** A code Slack would send the browser back with, for `install`; each code works once. */
  issueCode(install: FakeWorkspaceInstall): string;
  /** The bot token issued to `teamId` last (by an install or a refresh). */
  tokenOf(teamId: string): string | undefined;
  /** Refresh tokens exchanged (`grant_type=refresh_token`), in order. */
  refreshes: string[];
  /** Tokens given back with `auth.revoke`. */
  revoked: string[];
}

export function createFakeSlackOAuth() {
  const codes = new Map<string, FakeWorkspaceInstall>();
  const tokens = new Map<string, FakeWorkspaceInstall>();
  let issued = 0;
  const oauth: FakeSlackOAuth = {
    clientId: '1111.2222',
    clientSecret: 'fake-client-secret',
    redirectUri: 'https://butler.example.com/slack/oauth_redirect',
    issueCode(install) {
      issued += 1;
      const code = `code-${issued}`;
      codes.set(code, install);
      return code;
    },
    tokenOf: (teamId) => [...tokens].filter(([, install]) => install.teamId === teamId).at(-1)?.[0],
    refreshes: [],
    revoked: [],
  };
  /** Refresh tokens not used yet: each works once. */
  const refreshTokens = new Map<string, FakeWorkspaceInstall>();

  /** A rotated pair for `install`: the new bot token lives 12 hours, as Slack's do. */
  function rotate(install: FakeWorkspaceInstall): Answer {
    issued += 1;
    const token = `xoxe.xoxb-${install.teamId}-${issued}`;
    const refreshToken = `xoxe-1-${install.teamId}-${issued}`;
    tokens.set(token, install);
    refreshTokens.set(refreshToken, install);
    return {
      ok: true,
      access_token: token,
      refresh_token: refreshToken,
      expires_in: 43_200,
      token_type: 'bot',
    };
  }

  /** An install's refresh token, and when its first bot token expires. */
  function rotatingTokens(install: FakeWorkspaceInstall, expiresIn: number): Answer {
    const refreshToken = `xoxe-1-${install.teamId}-install-${issued}`;
    refreshTokens.set(refreshToken, install);
    return { refresh_token: refreshToken, expires_in: expiresIn };
  }

  function access(args: Record<string, unknown>, basic: string | undefined): Answer {
    const [clientId, clientSecret] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':')
      : [args.client_id, args.client_secret];
    if (clientId !== oauth.clientId || clientSecret !== oauth.clientSecret)
      return { ok: false, error: 'invalid_client_id' };
    if (args.grant_type === 'refresh_token') {
      const refreshToken = String(args.refresh_token);
      oauth.refreshes.push(refreshToken);
      const owner = refreshTokens.get(refreshToken);
      if (!owner) return { ok: false, error: 'invalid_refresh_token' };
      refreshTokens.delete(refreshToken);
      return rotate(owner);
    }
    const install = typeof args.code === 'string' ? codes.get(args.code) : undefined;
    if (!install) return { ok: false, error: 'invalid_code' };
    codes.delete(args.code as string);
    if (args.redirect_uri !== oauth.redirectUri) return { ok: false, error: 'bad_redirect_uri' };
    issued += 1;
    const token = `xoxb-${install.teamId}-${issued}`;
    tokens.set(token, install);
    return {
      ok: true,
      access_token: token,
      token_type: 'bot',
      scope: 'app_mentions:read,chat:write',
      bot_user_id: install.botUserId,
      app_id: 'A0BUTLER',
      team: install.isEnterpriseInstall
        ? null
        : { id: install.teamId, name: install.teamName ?? install.teamId },
      enterprise: install.enterpriseId ? { id: install.enterpriseId, name: 'Org' } : null,
      is_enterprise_install: install.isEnterpriseInstall ?? false,
      authed_user: { id: install.installerId },
      ...(install.rotating ? rotatingTokens(install, install.rotating.expiresIn) : {}),
    };
  }

  return {
    oauth,
    /** `auth.revoke`: the calling token stops working. */
    revoke(token: string | undefined): Answer {
      if (!token || !tokens.delete(token)) return { ok: false, error: 'invalid_auth' };
      oauth.revoked.push(token);
      return { ok: true, revoked: true };
    },
    /** `auth.test` for a token this room issued, or undefined for another. */
    authTest(token: string | undefined): Answer | undefined {
      const install = token ? tokens.get(token) : undefined;
      if (!install) return undefined;
      return {
        ok: true,
        url: `https://${install.teamId.toLowerCase()}.slack.com/`,
        team: install.teamName ?? install.teamId,
        user: 'butler',
        team_id: install.teamId,
        user_id: install.botUserId,
        bot_id: install.botId,
        is_enterprise_install: install.isEnterpriseInstall ?? false,
      };
    },
    access,
  };
}
