/** Slack's inbound text dialect → plain text for the model. Pure functions. */

const userMentionPattern = /<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Removes Butler's own mention and turns Slack's `<…>` tokens into readable text. Other user
 * mentions without a label stay as `<@U…>` for `resolveMentions` (it needs users.info).
 */
export function cleanInboundText(text: string, botUserId: string | undefined): string {
  let result = text;
  if (botUserId) {
    result = result.replace(new RegExp(`<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>[ \\t]?`, 'g'), '');
  }
  result = result
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, (_match, id: string, name: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(
      /<!subteam\^([A-Z0-9]+)(?:\|([^>]*))?>/g,
      (_match, id: string, label?: string) => label || `@${id}`,
    )
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(userMentionPattern, (match, _id: string, label?: string) => (label ? `@${label}` : match))
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]*)>/g, (_match, url: string, label: string) =>
      !label || label === url ? url : `${label} (${url})`,
    )
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1');
  return decodeEntities(result).trim();
}

/** User ids mentioned as `<@U…>` (without a label), in order of first appearance. */
export function mentionedUserIds(text: string): string[] {
  const ids = new Set<string>();
  for (const match of text.matchAll(userMentionPattern)) {
    if (match[1] && !match[2]) ids.add(match[1]);
  }
  return [...ids];
}

/** Replaces `<@U…>` with `@Name` where `names` knows the user; unknown ones stay as Slack mentions. */
export function replaceMentions(text: string, names: ReadonlyMap<string, string>): string {
  return text.replace(userMentionPattern, (match, id: string, label?: string) => {
    if (label) return `@${label}`;
    const name = names.get(id);
    return name ? `@${name}` : match;
  });
}

/** Whether `text` mentions the bot user. */
export function mentionsUser(text: string, userId: string | undefined): boolean {
  if (!userId) return false;
  return new RegExp(`<@${escapeRegExp(userId)}(?:\\|[^>]*)?>`).test(text);
}
