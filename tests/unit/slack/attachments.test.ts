import { describe, expect, it } from 'vitest';
import {
  attachmentCharacterLimit,
  attachmentsCharacterLimit,
  describeAttachments,
} from '../../../src/adapters/slack/attachments.js';
import { type NormalizeOptions, normalizeMessageEvent } from '../../../src/adapters/slack/normalize.js';
import { blocksText } from '../../../src/adapters/slack/rich-text.js';
import {
  botId,
  botUserId,
  directMessage,
  envelope,
  fieldsAttachment,
  otherBotMessage,
  sharedAttachment,
  slackbotNotice,
  team,
} from './payloads.js';

const options: NormalizeOptions = { identity: { userId: botUserId, botId, teamId: team }, answerBots: false };

function normalizedText(event: Record<string, unknown>, overrides: Partial<NormalizeOptions> = {}): string {
  const result = normalizeMessageEvent(envelope(event), event, { ...options, ...overrides });
  if (result.kind !== 'message') throw new Error(`expected a message, got ${result.reason}`);
  return result.message.text;
}

describe('Slack attachments reach the model', () => {
  it('quotes a forwarded message with its author, channel and link after the question', () => {
    const event = {
      ...directMessage({ ts: '1700000200.000100', text: 'what does this mean?' }),
      attachments: [sharedAttachment({ text: 'payments p99 is *above* 2s &amp; rising' })],
    };
    expect(normalizedText(event)).toBe(
      [
        'what does this mean?',
        '',
        '[Forwarded message from bob in #incidents (https://butler-test.slack.com/archives/C0INCIDENTS/p1700000000000100)]',
        '> payments p99 is *above* 2s & rising',
      ].join('\n'),
    );
  });

  it('reads a forward sent without a comment, from its blocks when it has no text', () => {
    const shared = { ...sharedAttachment({ text: 'db failover at 10:02' }), text: undefined };
    const event = {
      ...directMessage({ ts: '1700000210.000100', text: '' }),
      blocks: [],
      attachments: [shared],
    };
    expect(normalizedText(event)).toContain('> db failover at 10:02');
  });

  it('names a DM source and keeps an unnamed author for name resolution', () => {
    const shared = {
      ...sharedAttachment({ text: 'ok', channelId: 'D0BOB', channelName: 'Direct Message' }),
      author_name: undefined,
      author_subname: undefined,
    };
    expect(describeAttachments([shared])).toMatch(/^\[Forwarded message from <@U0BOB> in a direct message /);
  });

  it('turns a legacy attachment table into lines, title link included', () => {
    expect(describeAttachments([fieldsAttachment()])).toBe(
      [
        '[Attachment]',
        '> Deploy finished',
        '> Deploy Bot',
        '> Deploy 42 (https://ci.example.com/deploys/42)',
        '> payments rolled out to *production*',
        '> Service: payments',
        '> Checks: 3 of 4 passed',
        '> ci.example.com',
      ].join('\n'),
    );
  });

  it('falls back to the fallback text, and ignores attachments of no known shape', () => {
    expect(describeAttachments([{ fallback: 'Build #7 failed', color: 'danger' }])).toBe(
      '[Attachment]\n> Build #7 failed',
    );
    expect(describeAttachments([{ this: 'attachments', does: 'not', follow: 0 }, 'junk', null])).toBe('');
    expect(describeAttachments('not an array')).toBe('');
  });

  it('describes a link unfurl by its service', () => {
    const unfurl = {
      from_url: 'https://status.example.com/incidents/9',
      original_url: 'https://status.example.com/incidents/9',
      service_name: 'Statuspage',
      title: 'Degraded performance',
      title_link: 'https://status.example.com/incidents/9',
      text: 'We are investigating elevated error rates.',
      fallback: 'Statuspage: Degraded performance',
    };
    expect(describeAttachments([unfurl])).toBe(
      [
        '[Attachment from Statuspage]',
        '> Degraded performance (https://status.example.com/incidents/9)',
        '> We are investigating elevated error rates.',
      ].join('\n'),
    );
  });

  it('bounds each attachment and all of them together', () => {
    const huge = sharedAttachment({ text: 'x'.repeat(20_000) });
    const one = describeAttachments([huge]);
    expect(one.length).toBeLessThanOrEqual(attachmentCharacterLimit);
    expect(one).toMatch(/…\(truncated\)$/);
    const many = describeAttachments(Array.from({ length: 8 }, () => huge));
    expect(many.length).toBeLessThanOrEqual(attachmentsCharacterLimit);
    expect(many.split('[Forwarded message').length - 1).toBe(2);
  });

  it("lists a forwarded message's files", () => {
    const shared = {
      ...sharedAttachment({ text: 'see the graph' }),
      files: [{ id: 'F1', name: 'latency.png', mimetype: 'image/png' }],
    };
    expect(describeAttachments([shared])).toContain(
      '> [attached image: latency.png (image/png); Butler cannot open attachments]',
    );
  });

  it("answers another bot's attachment-only message when answerBots is set", () => {
    const event = {
      ...otherBotMessage({ ts: '1700000220.000100' }),
      text: '',
      attachments: [fieldsAttachment()],
    };
    expect(normalizedText({ ...event, type: 'app_mention' }, { answerBots: true })).toContain(
      '> Checks: 3 of 4 passed',
    );
  });

  it('does not count a mention inside a forwarded message as a mention of Butler', () => {
    const event = {
      ...directMessage({ ts: '1700000230.000100', text: 'fyi' }),
      channel: 'C0GENERAL',
      channel_type: 'channel',
      thread_ts: '1700000000.000100',
      attachments: [sharedAttachment({ text: `<@${botUserId}> can you restart it?` })],
    };
    const result = normalizeMessageEvent(envelope(event), event, options);
    expect(result.kind === 'message' && result.message.isMention).toBe(false);
  });
});

describe('Slack messages with blocks and no text', () => {
  it('reads rich_text blocks when text is empty, removing only Butler’s mention', () => {
    const blocks = [
      {
        type: 'rich_text',
        block_id: 'x1',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'user', user_id: botUserId },
              { type: 'text', text: ' check ' },
              { type: 'channel', channel_id: 'C0DEPLOYS' },
              { type: 'text', text: ' with ' },
              { type: 'user', user_id: 'U0BOB' },
              { type: 'emoji', name: 'thumbsup', unicode: '1f44d' },
            ],
          },
          {
            type: 'rich_text_list',
            style: 'ordered',
            elements: [
              { type: 'rich_text_section', elements: [{ type: 'text', text: 'logs' }] },
              {
                type: 'rich_text_section',
                elements: [{ type: 'link', url: 'https://grafana.example.com', text: 'graphs' }],
              },
            ],
          },
          { type: 'rich_text_quote', elements: [{ type: 'text', text: 'it was fine yesterday' }] },
          { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'kubectl get pods\n' }] },
        ],
      },
    ];
    const event = { ...directMessage({ ts: '1700000300.000100', text: '' }), blocks };
    expect(normalizedText(event)).toBe(
      [
        'check #C0DEPLOYS with <@U0BOB>👍',
        '1. logs',
        '2. graphs (https://grafana.example.com)',
        '> it was fine yesterday',
        '```',
        'kubectl get pods',
        '```',
      ].join('\n'),
    );
  });

  it('reads section, header and context blocks, and skips unknown ones', () => {
    expect(
      blocksText([
        { type: 'header', text: { type: 'plain_text', text: 'Incident 9' } },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: '*Status:* investigating' },
          fields: [{ type: 'mrkdwn', text: 'Sev 2' }],
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'opened by <@U0BOB>' }] },
        { type: 'divider' },
        { type: 'image', image_url: 'https://x/y.png', alt_text: 'graph' },
      ]),
    ).toBe('Incident 9\n*Status:* investigating\nSev 2\nopened by <@U0BOB>');
    expect(blocksText(undefined)).toBe('');
  });
});

describe('Slack bot senders', () => {
  it('names another bot by its bot_profile, and a legacy integration by its username', () => {
    const modern = {
      ...otherBotMessage({ ts: '1700000500.000100' }),
      type: 'app_mention',
      bot_profile: {
        id: 'B0DEPLOYBOT',
        app_id: 'A0DEPLOYBOT',
        name: 'Deploy Bot',
        deleted: false,
        team_id: team,
      },
    };
    const legacy = {
      type: 'message',
      subtype: 'bot_message',
      bot_id: 'B0WEBHOOK',
      username: 'Nightly build',
      text: 'build 7 failed',
      ts: '1700000510.000100',
      channel: 'D0ALICE',
      channel_type: 'im',
    };
    for (const [event, name] of [
      [modern, 'Deploy Bot'],
      [legacy, 'Nightly build'],
    ] as const) {
      const result = normalizeMessageEvent(envelope(event), event, { ...options, answerBots: true });
      expect(result.kind === 'message' && result.message.user.name).toBe(name);
    }
  });
});

describe('Slackbot', () => {
  it("ignores Slackbot's system notices in Butler's DM", () => {
    const event = slackbotNotice({ ts: '1700000400.000100' });
    expect(normalizeMessageEvent(envelope(event), event, options)).toEqual({
      kind: 'ignored',
      reason: 'slackbot',
    });
  });
});
