import { describe, expect, it } from 'vitest';
import {
  cleanInboundText,
  mentionedUserIds,
  replaceMentions,
} from '../../../src/adapters/slack/inbound-text.js';
import { openFence, splitPoint } from '../../../src/adapters/slack/markdown-split.js';
import { escapeMrkdwn, markdownToMrkdwn } from '../../../src/adapters/slack/mrkdwn.js';

describe('cleanInboundText', () => {
  it("removes Butler's mention and keeps other mentions for name resolution", () => {
    expect(cleanInboundText('<@U0BOT> ask <@U0BOB> about it', 'U0BOT')).toBe('ask <@U0BOB> about it');
    expect(cleanInboundText('thanks <@U0BOT|butler>!', 'U0BOT')).toBe('thanks !');
  });

  it("turns Slack's tokens into readable text and decodes entities", () => {
    const text =
      'see <#C123|deploys> and <https://example.com/a?b=1&amp;c=2|the runbook>, <https://x.io>, <!here> &lt;3';
    expect(cleanInboundText(text, 'U0BOT')).toBe(
      'see #deploys and the runbook (https://example.com/a?b=1&c=2), https://x.io, @here <3',
    );
    expect(cleanInboundText('<@U0BOB|bob> and <!subteam^S1|@oncall>', 'U0BOT')).toBe('@bob and @oncall');
  });

  it('keeps code blocks intact', () => {
    expect(cleanInboundText('<@U0BOT> ```\nif (a &lt; b) {\n    run();\n}\n```', 'U0BOT')).toBe(
      '```\nif (a < b) {\n    run();\n}\n```',
    );
  });

  it('resolves mentions to names where known', () => {
    expect(mentionedUserIds('<@U1> <@U2> <@U1> <@U3|carol>')).toEqual(['U1', 'U2']);
    expect(replaceMentions('<@U1> and <@U2>', new Map([['U1', 'Alice']]))).toBe('@Alice and <@U2>');
  });
});

describe('markdownToMrkdwn', () => {
  it('converts emphasis, links, headings and bullets', () => {
    const markdown = [
      '# Deploy report',
      'The **api** is *up*, ~~down~~ no more.',
      '- see [the dashboard](https://grafana.example.com/d/1)',
      '* second item',
      '> quoted',
    ].join('\n');
    expect(markdownToMrkdwn(markdown)).toBe(
      [
        '*Deploy report*',
        'The *api* is _up_, ~down~ no more.',
        '• see <https://grafana.example.com/d/1|the dashboard>',
        '• second item',
        '>quoted',
      ].join('\n'),
    );
  });

  it('leaves code alone but escapes what Slack would parse', () => {
    const markdown = 'Run `a **b** < c` then:\n```bash\necho "**x**" > out & done\n```\n1 < 2 & 3 > 2';
    expect(markdownToMrkdwn(markdown)).toBe(
      'Run `a **b** &lt; c` then:\n```\necho "**x**" &gt; out &amp; done\n```\n1 &lt; 2 &amp; 3 &gt; 2',
    );
  });

  it('escapes user text for mrkdwn', () => {
    expect(escapeMrkdwn('<@U1> & <!channel>')).toBe('&lt;@U1&gt; &amp; &lt;!channel&gt;');
  });
});

describe('splitting long replies', () => {
  it('prefers paragraph, line and word breaks', () => {
    expect(splitPoint('short', 10)).toBe(5);
    expect(splitPoint('aaaaaaa\n\nbbbb cccc', 14)).toBe(9);
    expect(splitPoint('aaaa bbbb\ncccc dddd', 15)).toBe(10);
    expect(splitPoint('aaaa bbbb cccc', 12)).toBe(10);
    expect(splitPoint('abcdefghijklmnop', 8)).toBe(8);
  });

  it('never splits a surrogate pair', () => {
    const text = `${'a'.repeat(7)}😀bbbbbbbb`;
    expect(splitPoint(text, 8)).toBe(7);
  });

  it('finds a code fence left open', () => {
    expect(openFence('text\n```ts\nconst a = 1;\n')).toBe('```ts');
    expect(openFence('```ts\ncode\n```\nafter')).toBeUndefined();
    expect(openFence('no fences')).toBeUndefined();
  });
});
