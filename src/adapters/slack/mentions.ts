/**
 * Slack reads `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<#C…>`, `<!subteam^…>` and disguised links
 * `<https://evil|innocent>` as live markup in `markdown_text`, markdown blocks and mrkdwn alike. Text Butler
 * did not write itself (the model's reply, what people and tools said) must never ping anyone or hide a
 * link's target. In mrkdwn, `escapeMrkdwn` turns `<` into `&lt;`; Markdown shows no such entity as
 * intended, so there a zero-width space after `<` keeps the text visible but no longer markup. Bare
 * `@channel`, `@here` and `@everyone` get a word joiner after `@` for the same reason.
 */

const markupStart = /<(?=[!@#A-Za-z])/g;
const broadcast = /@(?=(?:channel|here|everyone)\b)/gi;

export function defuseMarkdown(text: string): string {
  return defuseBroadcasts(text.replace(markupStart, '<\u200b'));
}

export function defuseBroadcasts(text: string): string {
  return text.replace(broadcast, '@\u2060');
}

/**
 * The same for text that arrives in pieces (a streamed reply): a `<` or `@` at the end of a piece waits
 * for the next one, which says whether it starts markup.
 */
export class StreamingMarkdownDefuser {
  private held = '';

  push(piece: string): string {
    const text = this.held + piece;
    // A `<` decides on the character after it; `@` on the word after it (and a `<` before it with it).
    const hold = /(?:<?@[A-Za-z]{0,8}|<)$/.exec(text)?.[0] ?? '';
    this.held = hold;
    return defuseMarkdown(text.slice(0, text.length - hold.length));
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return defuseMarkdown(rest);
  }
}
