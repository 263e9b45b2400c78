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
  if (event.type !== 'app_uninstalled' && event.type !== 'tokens_revoked') return undefined;
  // Sent without `authorizations`: the workspace's installation, or else its enterprise's org-wide one.
  const source = installationSourceOf(body);
  for (const key of [installationKeyOf(source), source.enterpriseId]) {
    if (key === undefined) continue;
    const botUser = await botUserOf(key);
    if (botUser === undefined) continue;
    if (event.type === 'app_uninstalled') return key;
    const tokens = isRecord(event.tokens) ? event.tokens : {};
    const bots = Array.isArray(tokens.bot) ? tokens.bot : [];
    return bots.includes(botUser) ? key : undefined;
  }
  return undefined;
}
