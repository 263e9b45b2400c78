import { describe, expect, it } from 'vitest';
import { defuseMarkdown, StreamingMarkdownDefuser } from '../../../src/adapters/slack/mentions.js';

/** What a person, a tool or the model could write to ping a channel or hide where a link goes. */
const attempts = [
  '<!channel>',
  '<!here|here>',
  '<!everyone>',
  '<@U0BOSS>',
  '<#C0GENERAL>',
  '<!subteam^S0ONCALL>',
  '<https://evil.example|innocent>',
  '<mailto:boss@example.com|the boss>',
  '@channel',
  '@here please',
  '@Everyone',
];

/** Whether Slack would read markup or a broadcast in the text. */
const live = (text: string) => /<[!@#A-Za-z]/.test(text) || /@(channel|here|everyone)\b/i.test(text);

describe('defusing Slack markup in Markdown', () => {
  it.each(attempts)('keeps %s visible but inert', (attempt) => {
    const defused = defuseMarkdown(`before ${attempt} after`);
    expect(live(defused)).toBe(false);
    // Only invisible characters were added: what people read is unchanged.
    expect(defused.replace(/[\u200b\u2060]/g, '')).toBe(`before ${attempt} after`);
  });

  it('leaves comparisons, arrows and e-mail addresses alone', () => {
    for (const text of ['a < b', '<- back', 'x <= 3', 'mail me at ana@example.com', '@channels']) {
      expect(defuseMarkdown(text)).toBe(text);
    }
  });

  it('defuses markup split across streamed pieces', () => {
    for (const attempt of attempts) {
      for (let cut = 0; cut <= attempt.length; cut++) {
        const stream = new StreamingMarkdownDefuser();
        const shown =
          stream.push(`hi ${attempt.slice(0, cut)}`) + stream.push(attempt.slice(cut)) + stream.flush();
        expect(live(shown), `${attempt} cut at ${cut}`).toBe(false);
        expect(shown.replace(/[\u200b\u2060]/g, '')).toBe(`hi ${attempt}`);
      }
    }
  });
});
