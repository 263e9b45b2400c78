import { describe, expect, it } from 'vitest';
import { type NormalizeOptions, normalizeMessageEvent } from '../../../src/adapters/slack/normalize.js';
import {
  appMention,
  botId,
  botUserId,
  directMessage,
  envelope,
  envelopeFor,
  messageChanged,
  otherBotMessage,
  ownMessage,
  team,
  userMessage,
} from './payloads.js';

const options: NormalizeOptions = { identity: { userId: botUserId, botId, teamId: team }, answerBots: false };

function normalize(
  event: Record<string, unknown>,
  overrides: Partial<NormalizeOptions> = {},
  body = envelope(event),
) {
  return normalizeMessageEvent(body, event, { ...options, ...overrides });
}

function accepted(result: ReturnType<typeof normalizeMessageEvent>) {
  if (result.kind !== 'message') throw new Error(`expected a message, got ${result.reason}`);
  return result;
}

describe('normalizeMessageEvent', () => {
  it('turns a top-level channel mention into a conversation on its own thread', () => {
    const body = envelope(appMention({ ts: '1700000000.000100', text: `<@${botUserId}> restart   the api` }));
    const { message, requiresKnownConversation } = accepted(normalizeMessageEvent(body, body.event, options));
    expect(requiresKnownConversation).toBe(false);
    expect(message).toEqual({
      kind: 'message',
      address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: '1700000000.000100' },
      messageId: '1700000000.000100',
      eventId: body.event_id,
      dedupKey: `${team}:C0GENERAL:1700000000.000100`,
      user: { id: 'U0ALICE' },
      text: 'restart   the api',
      isMention: true,
      isDirect: false,
      sentAt: new Date(1_700_000_000_000).toISOString(),
    });
  });

  it('answers a mention inside a thread in that thread', () => {
    const { message } = accepted(
      normalize(appMention({ ts: '1700000050.000200', threadTs: '1700000000.000100' })),
    );
    expect(message.address.thread).toBe('1700000000.000100');
    expect(message.messageId).toBe('1700000050.000200');
  });

  it('gives message and app_mention of the same Slack message one dedup key', () => {
    const mention = accepted(
      normalize(appMention({ ts: '1700000050.000200', threadTs: '1700000000.000100' })),
    );
    const plain = accepted(
      normalize(
        userMessage({ ts: '1700000050.000200', threadTs: '1700000000.000100', text: `<@${botUserId}> hi` }),
      ),
    );
    expect(plain.message.dedupKey).toBe(mention.message.dedupKey);
    expect(plain.message.eventId).not.toBe(mention.message.eventId);
    expect(plain.message.isMention).toBe(true);
  });

  it('keeps the same channel and ts in two workspaces apart', () => {
    const ts = '1700000050.000300';
    const ours = accepted(normalize(appMention({ ts })));
    const body = envelopeFor('T0OTHER', appMention({ ts }));
    const theirs = accepted(normalizeMessageEvent(body, body.event, options));
    expect(theirs.message.address).toMatchObject({ workspace: 'T0OTHER', channel: 'C0GENERAL' });
    expect(theirs.message.dedupKey).not.toBe(ours.message.dedupKey);
  });

  it('puts top-level DMs on thread main and a DM thread on its own conversation', () => {
    const top = accepted(normalize(directMessage({ ts: '1700000100.000100' })));
    expect(top.message.address).toEqual({
      platform: 'slack',
      workspace: team,
      channel: 'D0ALICE',
      thread: 'main',
    });
    expect(top.message.isDirect).toBe(true);
    expect(top.message.isMention).toBe(false);
    expect(top.requiresKnownConversation).toBe(false);
    const threaded = accepted(
      normalize(directMessage({ ts: '1700000200.000100', threadTs: '1700000100.000100' })),
    );
    expect(threaded.message.address.thread).toBe('1700000100.000100');
  });

  it('accepts a thread follow-up without a mention only for threads Butler is in', () => {
    const result = accepted(
      normalize(userMessage({ ts: '1700000060.000300', threadTs: '1700000000.000100' })),
    );
    expect(result.requiresKnownConversation).toBe(true);
    expect(result.message.isMention).toBe(false);
    expect(result.message.address.thread).toBe('1700000000.000100');
  });

  it('ignores plain top-level channel messages (app_mention covers mentions)', () => {
    expect(normalize(userMessage({ ts: '1700000070.000100', text: `<@${botUserId}> hello` }))).toEqual({
      kind: 'ignored',
      reason: 'channel_message_outside_thread',
    });
  });

  it("ignores Butler's own posts (no subtype, bot_id and bot user)", () => {
    expect(normalize(ownMessage({ ts: '1700000080.000100', threadTs: '1700000000.000100' }))).toEqual({
      kind: 'ignored',
      reason: 'own_message',
    });
    expect(normalize({ ...ownMessage({ ts: '1700000080.000100' }), bot_id: undefined })).toMatchObject({
      reason: 'own_message',
    });
  });

  it('ignores edits, deletions and other subtypes', () => {
    expect(normalize(messageChanged({ ts: '1700000090.000100' }))).toEqual({
      kind: 'ignored',
      reason: 'subtype_message_changed',
    });
    const deleted = {
      type: 'message',
      subtype: 'message_deleted',
      hidden: true,
      channel: 'C0GENERAL',
      ts: '1.2',
      deleted_ts: '1.1',
    };
    expect(normalize(deleted)).toMatchObject({ kind: 'ignored', reason: 'subtype_message_deleted' });
    const joined = { ...userMessage({ ts: '1.3' }), subtype: 'channel_join' };
    expect(normalize(joined)).toMatchObject({ reason: 'subtype_channel_join' });
  });

  it('ignores other bots unless answerBots is set', () => {
    const event = otherBotMessage({ ts: '1700000095.000100' });
    expect(normalize(appMentionFrom(event))).toEqual({ kind: 'ignored', reason: 'bot_message' });
    const result = accepted(normalize(appMentionFrom(event), { answerBots: true }));
    expect(result.message.user.id).toBe('U0DEPLOYBOT');
    expect(result.message.text).toBe('deploy finished');
  });

  it('hands the core the files Butler can fetch, and notes the ones it cannot', () => {
    const file = (id: string, name: string, mimetype: string, extra: Record<string, unknown> = {}) => ({
      id,
      name,
      title: name,
      mimetype,
      size: 2048,
      mode: 'hosted',
      is_external: false,
      url_private: `https://files.slack.com/files-pri/${team}-${id}/${name}`,
      url_private_download: `https://files.slack.com/files-pri/${team}-${id}/download/${name}`,
      ...extra,
    });
    const event = userMessage({
      channelType: 'im',
      channel: 'D0ALICE',
      ts: '1700000110.000100',
      text: 'what does this show?',
      extra: {
        subtype: 'file_share',
        files: [
          file('F1', 'diagram.png', 'image/png'),
          file('F2', 'notes.pdf', 'application/pdf', { url_private_download: undefined }),
          { id: 'F3', mode: 'tombstone' },
          file('F4', 'old.log', 'text/plain', { mode: 'hidden_by_limit' }),
          file('F5', 'plan.gdoc', 'application/vnd.google-apps.document', {
            mode: 'external',
            is_external: true,
          }),
          { id: 'F6', name: 'no-url.txt', mimetype: 'text/plain' },
        ],
      },
    });
    const { message } = accepted(normalize(event));
    expect(message.files).toEqual([
      {
        key: 'F1',
        name: 'diagram.png',
        mimeType: 'image/png',
        size: 2048,
        locator: `https://files.slack.com/files-pri/${team}-F1/download/diagram.png`,
      },
      {
        key: 'F2',
        name: 'notes.pdf',
        mimeType: 'application/pdf',
        size: 2048,
        locator: `https://files.slack.com/files-pri/${team}-F2/notes.pdf`,
      },
    ]);
    expect(message.text.split('\n')).toEqual([
      'what does this show?',
      '[attached file: unnamed; the file was deleted]',
      "[attached file: old.log (text/plain); hidden by the workspace's plan limit]",
      '[attached file: plan.gdoc (application/vnd.google-apps.document); stored outside Slack; Butler cannot open it]',
      '[attached file: no-url.txt (text/plain); Butler cannot open attachments]',
    ]);
  });

  it('accepts files without text (file_share), in DMs and with a mention alike', () => {
    const files = [
      {
        id: 'F1',
        name: 'screenshot.png',
        mimetype: 'image/png',
        url_private_download: 'https://files.slack.com/files-pri/T0BUTLER-F1/download/screenshot.png',
      },
    ];
    const empty = accepted(normalize(directMessage({ ts: '1700000111.000100', text: '' })));
    expect(empty.message).toMatchObject({ text: '(empty message)' });
    expect(empty.message.files).toBeUndefined();
    const shared = { ...directMessage({ ts: '1700000111.000200', text: '' }), subtype: 'file_share', files };
    const { message } = accepted(normalize(shared));
    expect(message.text).toBe('');
    expect(message.files?.map((file) => file.key)).toEqual(['F1']);
    const mention = accepted(normalize({ ...appMention({ ts: '1700000111.000300' }), files }));
    expect(mention.message.files?.map((file) => file.name)).toEqual(['screenshot.png']);
  });

  it('never hands the model an empty message', () => {
    const { message } = accepted(normalize(appMention({ ts: '1700000120.000100', text: `<@${botUserId}>` })));
    expect(message.text).toBe('(empty message)');
  });

  it('takes the workspace from the envelope (stable for Slack Connect senders)', () => {
    const event = { ...appMention({ ts: '1700000130.000100' }), team: 'T0PARTNER' };
    expect(accepted(normalize(event)).message.address.workspace).toBe(team);
    const bare = { type: 'event_callback', event };
    expect(accepted(normalizeMessageEvent(bare, event, options)).message.address.workspace).toBe('T0PARTNER');
  });

  it('uses the sender name when Slack includes a profile', () => {
    const event = {
      ...appMention({ ts: '1700000140.000100' }),
      user_profile: { display_name: 'Alice', real_name: 'Alice A.' },
    };
    expect(accepted(normalize(event)).message.user).toEqual({ id: 'U0ALICE', name: 'Alice' });
  });

  it('reports malformed payloads instead of throwing', () => {
    expect(normalizeMessageEvent(null, {}, options)).toEqual({ kind: 'ignored', reason: 'malformed' });
    expect(normalize({ type: 'app_mention', user: 'U1' })).toEqual({
      kind: 'ignored',
      reason: 'missing_fields',
    });
    expect(normalize({ type: 'reaction_added' })).toEqual({ kind: 'ignored', reason: 'not_a_message' });
  });
});

describe('the action token of a message (search as its sender)', () => {
  const mention = appMention({ ts: '1700000000.000100', user: 'U0ALICE' });
  const grantOf = (event: Record<string, unknown>) => accepted(normalize(event)).message.grant;

  it('is read from the event, or from its assistant_thread when that names the sender', () => {
    expect(grantOf({ ...mention, action_token: 'at-top' })).toBe('at-top');
    expect(grantOf({ ...mention, assistant_thread: { action_token: 'at-thread' } })).toBe('at-thread');
    expect(grantOf({ ...mention, assistant_thread: { user_id: 'U0ALICE', action_token: 'at-own' } })).toBe(
      'at-own',
    );
    expect(grantOf(mention)).toBeUndefined();
  });

  it("is never another person's: a thread naming someone else gives none", () => {
    expect(
      grantOf({ ...mention, assistant_thread: { user_id: 'U0BOB', action_token: 'at-bobs' } }),
    ).toBeUndefined();
  });
});

function appMentionFrom(event: Record<string, unknown>) {
  return { ...event, type: 'app_mention' };
}
