import { installationKeyOf, installationSourceOf } from './installation-source.js';
import { isRecord } from './parse.js';

/**
 * The installation an `app_uninstalled` or `tokens_revoked` event ends, as Slack sends them (without
 * `authorizations`). `tokens_revoked` lists user ids whose tokens were revoked, not tokens: it ends the
 * installation only when Butler's bot user there (as stored: its token may be gone) is among `tokens.bot` (a
 * person's revoked user token is not Butler's).
 */
export async function uninstalledKey(
  body: unknown,
  event: unknown,
  botUserOf: (key: string) => Promise<string | undefined>,
): Promise<string | undefined> {
  if (!isRecord(body) || !isRecord(event)) return undefined;
  const key = installationKeyOf(installationSourceOf(body));
  if (key === undefined) return undefined;
  if (event.type === 'app_uninstalled') return key;
  if (event.type !== 'tokens_revoked') return undefined;
  const tokens = isRecord(event.tokens) ? event.tokens : {};
  const bots = Array.isArray(tokens.bot) ? tokens.bot : [];
  const botUser = await botUserOf(key);
  return botUser !== undefined && bots.includes(botUser) ? key : undefined;
}
