import type { SecretKey } from '../core/connections/secret-box.js';
import type { ConfigIssue } from '../core/contracts/errors.js';
import type { FeishuConfig } from './feishu-apps.js';

/**
 * Message search (`core/search`): where it can work, from what the config gives. Slack searches with the
 * asker's action token, which is sealed before the inbox stores it: it needs a secret key. Feishu searches
 * with the asker's own user token, from a person connection to the one Feishu app's OAuth: it needs a secret
 * key (tokens are sealed), a public URL (the Connect link and callback) and exactly one app (each app is its
 * own OAuth client, and a person's token belongs to one).
 */
export interface SearchConfig {
  perMinute: number;
  slack: boolean;
  /** Whether Slack is asked for private conversations (results are filtered by Butler either way). */
  slackPrivate: boolean;
  /** The Feishu app whose people search, with its OAuth endpoints; absent: no Feishu search. */
  feishu: FeishuConfig | undefined;
}

export function resolveSearch(
  input: {
    perMinute: number;
    slackPrivate: boolean;
    slack: boolean;
    feishu: readonly FeishuConfig[] | undefined;
    secretKeys: SecretKey[] | undefined;
    publicUrl: string | undefined;
    mcpServerNames: readonly string[];
  },
  issues: ConfigIssue[],
  warnings: string[],
): SearchConfig {
  const keyed = input.secretKeys !== undefined;
  if (input.slack && !keyed)
    warnings.push(
      'Slack: searching messages is off: set BUTLER_SECRET_KEY (the action token that comes with each message is sealed with it)',
    );
  let feishu: FeishuConfig | undefined;
  if (input.feishu) {
    const missing = [
      ...(keyed ? [] : ['BUTLER_SECRET_KEY']),
      ...(input.publicUrl ? [] : ['BUTLER_PUBLIC_URL']),
      ...(input.feishu.length === 1 ? [] : ['a single Feishu app (each app is its own OAuth client)']),
    ];
    if (missing.length > 0)
      warnings.push(`Feishu: searching messages is off: it needs ${missing.join(', ')}`);
    else feishu = input.feishu[0];
    if (feishu && input.mcpServerNames.includes('feishu'))
      issues.push({
        variable: 'config file: mcpServers',
        message: 'the name feishu is taken by the connection Feishu search uses: rename the MCP server',
      });
  }
  return {
    perMinute: input.perMinute,
    slack: input.slack && keyed,
    slackPrivate: input.slackPrivate,
    feishu,
  };
}
