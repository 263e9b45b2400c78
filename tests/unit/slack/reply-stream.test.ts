import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { feedbackBlocks } from '../../../src/adapters/slack/feedback-blocks.js';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import {
  createCapabilities,
  defaultReplyTuning,
  type ReplyTuning,
} from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { botId, botUserId, team } from './payloads.js';

let fake: FakeSlackApi;

beforeEach(async () => {
  fake = await startFakeSlackApi();
});
afterEach(async () => {
  await fake.close();
});

const threadTs = '1700000000.000100';
const channelTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: threadTs },
  replyTo: threadTs,
  userId: 'U0ALICE',
};
const dmTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'D0ALICE', thread: 'main' },
  replyTo: '1700000100.000100',
  userId: 'U0ALICE',
};

function adapter(tuning: Partial<ReplyTuning> = {}): ChatAdapter {
  const api = createSlackApi({
    token: 'xoxb-test',
    apiUrl: fake.url,
    logger: silentLogger,
    minRetryDelayMs: 10,
  });
  return createSlackAdapter({
    api,
    logger: silentLogger,
    capabilities: createCapabilities(),
    tuning: { ...defaultReplyTuning, updateIntervalMs: 100, streamIntervalMs: 20, ...tuning },
    identity: () => ({ userId: botUserId, botId, teamId: team }),
  });
}

function methods(): string[] {
  return fake.calls.map((call) => call.method);
}

/** The reply as a reader sees it: every message's text, in order. */
function shownReply(ids: readonly string[], channel = 'C0GENERAL'): string[] {
  return ids.map((ts) => {
    const message = fake.messages.get(`${channel}:${ts}`);
    if (!message || message.deleted) throw new Error(`message ${ts} is gone`);
    return shownText(message);
  });
}

async function streamText(
  reply: { append(delta: string): Promise<void> },
  text: string,
  pieces = 10,
  pauseMs = 5,
) {
  const size = Math.ceil(text.length / pieces);
  for (let index = 0; index < text.length; index += size) {
    await reply.append(text.slice(index, index + size));
    await delay(pauseMs);
  }
}

const paragraph = (index: number) =>
  `Paragraph ${index}: ${'lorem ipsum dolor sit amet '.repeat(3).trim()}.\n\n`;
const longText = Array.from({ length: 12 }, (_, index) => paragraph(index)).join('');

describe('Slack replies', () => {
  it('streams into the thread with startStream, appendStream and stopStream', async () => {
    const created: string[] = [];
    const reply = await adapter().openReply(channelTarget, {
      onMessageCreated: (id) => void created.push(id),
    });
    const text = 'Deploy **finished**: 3 services restarted, no errors.';
    await streamText(reply, text);
    await reply.finish(text);

    expect(methods()[0]).toBe('chat.startStream');
    expect(methods().at(-1)).toBe('chat.stopStream');
    expect(methods()).not.toContain('chat.postMessage');
    const start = fake.callsTo('chat.startStream')[0];
    expect(start?.args).toMatchObject({
      channel: 'C0GENERAL',
      thread_ts: threadTs,
      recipient_user_id: 'U0ALICE',
      recipient_team_id: team,
    });
    expect(start?.token).toBe('xoxb-test');
    expect(reply.messageIds).toEqual(created);
    expect(shownReply(reply.messageIds)).toEqual([text]);
  });

  it("streams a top-level DM reply in the message's thread, without recipient", async () => {
    const reply = await adapter().openReply(dmTarget);
    await reply.append('Hello!');
    await reply.finish('Hello! How can I help?');
    const start = fake.callsTo('chat.startStream')[0];
    // Slack refuses a stream that is not a reply (the fake as Slack does): invalid_arguments without thread_ts.
    expect(start?.args.thread_ts).toBe(dmTarget.replyTo);
    expect(start?.args.recipient_user_id).toBeUndefined();
    expect(fake.callsTo('chat.postMessage')).toHaveLength(0);
    expect(shownReply(reply.messageIds, 'D0ALICE')).toEqual(['Hello! How can I help?']);
  });

  it('falls back to post + chat.update at most once per interval when streaming is unsupported', async () => {
    fake.streaming = false;
    const slack = adapter({ updateIntervalMs: 200 });
    const reply = await slack.openReply(channelTarget);
    const text = 'word '.repeat(120).trim();
    await streamText(reply, text, 30, 50);
    await reply.finish(text);

    expect(fake.callsTo('chat.startStream')).toHaveLength(1);
    expect(fake.callsTo('chat.postMessage')).toHaveLength(1);
    const updates = fake.callsTo('chat.update');
    expect(updates.length).toBeGreaterThanOrEqual(2);
    const times = [fake.callsTo('chat.postMessage')[0]?.at ?? 0, ...updates.map((call) => call.at)];
    for (let index = 1; index < times.length; index++) {
      // One reply's share of chat.update's Tier 3 (50 a minute) is one call per 1.2 s, above the tuning's
      // 200 ms. Server-side arrival times: allow for request latency jitter.
      expect((times[index] ?? 0) - (times[index - 1] ?? 0)).toBeGreaterThanOrEqual(1100);
    }
    expect(fake.callsTo('chat.postMessage')[0]?.args).toMatchObject({ thread_ts: threadTs });
    expect(shownReply(reply.messageIds)).toEqual([text]);
    const last = updates.at(-1)?.args;
    // The message that ends the reply carries the feedback buttons below its text.
    expect(last?.blocks).toEqual([{ type: 'markdown', text }, ...feedbackBlocks()]);
    expect(typeof last?.text).toBe('string');

    // Learnt once per channel: the next reply posts straight away.
    const second = await slack.openReply(channelTarget);
    await second.finish('second reply');
    expect(fake.callsTo('chat.startStream')).toHaveLength(1);
  });

  it('falls back for one reply only when streaming fails for a passing reason', async () => {
    const slack = adapter();
    fake.failNext('chat.startStream', { status: 500 }, 3);
    const first = await slack.openReply(channelTarget);
    await first.finish('first, posted');
    expect(fake.callsTo('chat.postMessage')).toHaveLength(1);
    const second = await slack.openReply(channelTarget);
    await second.finish('second, streamed');
    expect(fake.callsTo('chat.startStream')).toHaveLength(4);
    expect(shownReply(second.messageIds)).toEqual(['second, streamed']);
  });

  it('rolls over into new messages past the length limit, delivering every character', async () => {
    const created: string[] = [];
    const reply = await adapter({ messageLimit: 300 }).openReply(channelTarget, {
      onMessageCreated: (id) => void created.push(id),
    });
    await streamText(reply, longText, 25, 2);
    await reply.finish(longText);

    const shown = shownReply(reply.messageIds);
    expect(shown.length).toBeGreaterThan(2);
    expect(created).toEqual(reply.messageIds);
    for (const text of shown) expect(text.length).toBeLessThanOrEqual(300);
    expect(shown.join('')).toBe(longText);
    expect(fake.threadMessages('C0GENERAL', threadTs).every((message) => !message.streaming)).toBe(true);
  });

  it('closes and reopens a code fence cut by a rollover', async () => {
    const code = Array.from({ length: 30 }, (_, index) => `console.log(${index});`).join('\n');
    const text = `Here:\n\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
    const reply = await adapter({ messageLimit: 200 }).openReply(channelTarget);
    await streamText(reply, text, 10, 2);
    await reply.finish(text);
    const shown = shownReply(reply.messageIds);
    expect(shown.length).toBeGreaterThan(1);
    expect(shown[0]?.endsWith('\n```')).toBe(true);
    expect(shown[1]?.startsWith('```ts\n')).toBe(true);
    for (const part of shown) expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    const rejoined = shown.map((part, index) => {
      let body = part;
      if (index > 0 && body.startsWith('```ts\n')) body = body.slice('```ts\n'.length);
      if (index < shown.length - 1 && body.endsWith('\n```')) body = body.slice(0, -'\n```'.length);
      return body;
    });
    expect(rejoined.join('')).toBe(text);
  });

  it('continues in a new message when Slack ends the stream', async () => {
    const reply = await adapter().openReply(channelTarget);
    await reply.append('First part. ');
    const first = await fake.waitFor(() => reply.messageIds[0]);
    fake.endStream(first);
    await delay(30);
    await reply.append('Second part.');
    await reply.finish('First part. Second part.');
    expect(reply.messageIds).toHaveLength(2);
    expect(shownReply(reply.messageIds).join('')).toBe('First part. Second part.');
    expect(fake.callsTo('chat.startStream')).toHaveLength(2);
  });

  it('finishes the same message with chat.update when an append fails, never splitting a word', async () => {
    const reply = await adapter().openReply(channelTarget);
    await reply.append('Part one, hel');
    await fake.waitFor(() => reply.messageIds[0]);
    fake.failNext('chat.appendStream', { error: 'internal_error' });
    await reply.append('lo world. Part two.');
    await delay(50);
    await reply.append(' And three.');
    await reply.finish('Part one, hello world. Part two. And three.');
    expect(reply.messageIds).toHaveLength(1);
    expect(fake.callsTo('chat.postMessage')).toHaveLength(0);
    expect(fake.callsTo('chat.stopStream')).toHaveLength(1);
    expect(shownReply(reply.messageIds)).toEqual(['Part one, hello world. Part two. And three.']);
  });

  it('honours Retry-After on 429 and still delivers', async () => {
    fake.streaming = false;
    fake.failNext('chat.postMessage', { rateLimitedSeconds: 1 });
    const reply = await adapter().openReply(channelTarget);
    const started = Date.now();
    await reply.finish('rate limited but delivered');
    const posts = fake.callsTo('chat.postMessage');
    expect(posts).toHaveLength(2);
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(shownReply(reply.messageIds)).toEqual(['rate limited but delivered']);
  });

  it('overwrites the messages of an interrupted attempt on resume', async () => {
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000001.000001',
      threadTs,
      user: botUserId,
      botId,
      text: 'Half a rep',
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000001.000002',
      threadTs,
      user: botUserId,
      botId,
      text: 'more',
    });
    const created: string[] = [];
    const reply = await adapter().openReply(channelTarget, {
      resume: ['1700000001.000001', '1700000001.000002'],
      onMessageCreated: (id) => void created.push(id),
    });
    await reply.append('The complete ');
    await reply.finish('The complete reply.');
    expect(reply.messageIds).toEqual(['1700000001.000001']);
    expect(shownReply(reply.messageIds)).toEqual(['The complete reply.']);
    expect(fake.messages.get('C0GENERAL:1700000001.000002')?.deleted).toBe(true);
    expect(methods()).not.toContain('chat.postMessage');
    expect(methods()).not.toContain('chat.startStream');
    expect(created).toEqual([]);
  });

  it('continues in a new message when Slack will not let Butler edit one', async () => {
    fake.streaming = false;
    const reply = await adapter().openReply(channelTarget);
    await reply.append('Before. ');
    await fake.waitFor(() => reply.messageIds[0]);
    fake.failNext('chat.update', { error: 'cant_update_message' });
    await reply.append('After.');
    await reply.finish('Before. After.');
    expect(shownReply(reply.messageIds)).toEqual(['Before. ', 'After.']);
  });

  it('posts anew when a message to resume is gone', async () => {
    const created: string[] = [];
    const reply = await adapter().openReply(channelTarget, {
      resume: ['1700000001.000404'],
      onMessageCreated: (id) => void created.push(id),
    });
    await reply.finish('Fresh reply.');
    expect(reply.messageIds).toEqual(created);
    expect(shownReply(reply.messageIds)).toEqual(['Fresh reply.']);
  });

  it('shows the final text even when it differs from what was streamed', async () => {
    const reply = await adapter({ messageLimit: 120 }).openReply(channelTarget);
    const draft = 'The draft answer that will be replaced. '.repeat(6);
    await streamText(reply, draft, 6, 5);
    const final = 'The final answer. '.repeat(4);
    await reply.finish(final);
    const shown = shownReply(reply.messageIds).join('');
    expect(shown).toBe(final);
  });

  it('delivers text given only to finish', async () => {
    const reply = await adapter().openReply(channelTarget);
    await reply.append('Only the start');
    await reply.finish('Only the start, and the rest arrived at the end.');
    expect(shownReply(reply.messageIds)).toEqual(['Only the start, and the rest arrived at the end.']);
  });

  it('falls back to mrkdwn text for the one message whose markdown block Slack refused', async () => {
    fake.streaming = false;
    fake.failNext('chat.postMessage', { error: 'invalid_blocks' });
    const slack = adapter();
    const reply = await slack.openReply(channelTarget);
    await reply.finish('**bold** move');
    const posts = fake.callsTo('chat.postMessage');
    expect(posts).toHaveLength(2);
    expect(posts[1]?.args.blocks).toBeUndefined();
    expect(posts[1]?.args.text).toBe('*bold* move');

    // The next reply in the process still renders its table as a markdown block, not raw pipes.
    const table = '| service | state |\n| --- | --- |\n| api | up |';
    const next = await slack.openReply(channelTarget);
    await next.finish(table);
    expect(fake.callsTo('chat.postMessage')[2]?.args.blocks).toEqual([{ type: 'markdown', text: table }]);
  });

  it('stops writing when the user stops the stream', async () => {
    const reply = await adapter().openReply(channelTarget);
    await reply.append('Starting. ');
    await fake.waitFor(() => reply.messageIds[0]);
    fake.failNext('chat.appendStream', { error: 'stopped_by_user' });
    await reply.append('More text. ');
    await fake.waitFor(() => fake.callsTo('chat.appendStream').length > 0);
    await delay(20);
    const callsAfterStop = fake.calls.length;
    await reply.append('Even more.');
    await reply.finish('Starting. More text. Even more.');
    expect(fake.calls.length).toBe(callsAfterStop);
  });

  it('reports a reply it could not deliver', async () => {
    fake.streaming = false;
    fake.failNext('chat.postMessage', { error: 'channel_not_found' }, 3);
    const reply = await adapter().openReply(channelTarget);
    await reply.append('lost');
    await delay(50);
    await expect(reply.finish('lost')).rejects.toThrow(/channel_not_found/);
  });
});
