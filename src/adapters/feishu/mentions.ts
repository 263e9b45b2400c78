/**
 * Feishu turns `<at id=all></at>`, `<at user_id="ou_…">` and `<at email=…>` into live mentions in card
 * markdown and in text messages, inside code too. Text Butler did not write itself (the model's reply,
 * tool arguments, notices) must never ping anyone: a zero-width space after `<` keeps the tag visible as
 * text but no longer a tag.
 */
const atTag = /<(?=\s*at[\s>/])/gi;

export function defuseMentions(text: string): string {
  return text.replace(atTag, '<\u200b');
}
