import { installationKeyOf, installationSourceOf } from './installation-source.js';
import type { BotIdentity } from './normalize.js';
import { isRecord } from './parse.js';

/**
 * The installation an `app_uninstalled` or `tokens_revoked` event ends, as Slack sends them (without
 * `authorizations`). `tokens_revoked` lists user ids whose tokens were revoked, not tokens: it ends the
 * installation only when Butler's bot user is among `tokens.bot` (a person's revoked user token is not Butler's).
 */
export function uninstalledKey(
  body: unknown,
  event: unknown,
  identity: BotIdentity | undefined,
): string | undefined {
  if (!isRecord(body) || !isRecord(event)) return undefined;
  const key = installationKeyOf(installationSourceOf(body));
  if (event.type === 'app_uninstalled') return key;
  if (event.type !== 'tokens_revoked') return undefined;
  const tokens = isRecord(event.tokens) ? event.tokens : {};
  const bots = Array.isArray(tokens.bot) ? tokens.bot : [];
  return identity && bots.includes(identity.userId) ? key : undefined;
}
