/**
 * The bot scopes of `slack/manifest.yaml` (a test keeps them equal): what "Add to Slack" asks a workspace for.
 * Butler asks for no user scopes.
 */
export const manifestBotScopes = [
  'app_mentions:read',
  'chat:write',
  'channels:history',
  'groups:history',
  'im:history',
  'im:write',
  'mpim:history',
  'reactions:write',
  'users:read',
  'files:read',
  'files:write',
  'assistant:write',
  'search:read.public',
  'search:read.private',
  'search:read.im',
  'search:read.mpim',
  'channels:read',
  'groups:read',
  'im:read',
  'mpim:read',
] as const;
