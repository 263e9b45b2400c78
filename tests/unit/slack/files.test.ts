import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { downloadSlackFile, fileHosts, SlackFileError } from '../../../src/adapters/slack/file-access.js';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import { createCapabilities, defaultReplyTuning } from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { FileTooLargeError, type InboundFile } from '../../../src/core/contracts/files.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { botId, botUserId, team } from './payloads.js';

/** A 1×1 PNG. */
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

let fake: FakeSlackApi;
/** Another host (another port): it must never see the bot token. */
let elsewhere: { server: Server; url: string; authorizations: (string | undefined)[] };

function adapterWith(token: string, apiUrl = fake.url): ChatAdapter {
  const api = createSlackApi({ token, apiUrl, logger: silentLogger, retries: 0 });
  return createSlackAdapter({
    api,
    logger: silentLogger,
    capabilities: createCapabilities(),
    tuning: defaultReplyTuning,
    identity: () => ({ userId: botUserId, botId, teamId: team }),
  });
}

beforeEach(async () => {
  fake = await startFakeSlackApi();
  const authorizations: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    response.writeHead(200, { 'content-type': 'image/png' }).end(png);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  elsewhere = { server, url: `http://127.0.0.1:${port}`, authorizations };
});
afterEach(async () => {
  await fake.close();
  elsewhere.server.closeAllConnections();
  await new Promise((resolve) => elsewhere.server.close(resolve));
});

/** A shared file as normalize hands it to the core. */
function inbound(file: Record<string, unknown>, overrides: Partial<InboundFile> = {}): InboundFile {
  return {
    key: String(file.id),
    name: String(file.name),
    mimeType: String(file.mimetype),
    size: Number(file.size),
    locator: String(file.url_private_download),
    ...overrides,
  };
}

/** The same file as a message that does not say its size lists it: only the download can tell. */
function unsized(file: Record<string, unknown>): InboundFile {
  const { size, ...rest } = inbound(file);
  return rest;
}

const limits = { maxBytes: 1_000_000, workspace: 'T0BUTLER' };

describe('fetchFile', () => {
  it('downloads the bytes from Slack with the bot token, once per call', async () => {
    const file = fake.files.add({ name: 'chart.png', mimetype: 'image/png', bytes: png });
    const fetched = await adapterWith('xoxb-test').fetchFile?.(inbound(file), limits);
    expect(fetched?.name).toBe('chart.png');
    expect(fetched?.mimeType).toBe('image/png');
    expect(Buffer.from(fetched?.bytes ?? [])).toEqual(png);
    expect(fake.files.downloads(String(file.id))).toBe(1);
  });

  it('refuses a file URL on another host and never sends it the token', async () => {
    const file = fake.files.add({ name: 'chart.png', mimetype: 'image/png', bytes: png });
    const foreign = inbound(file, { locator: `${elsewhere.url}/files-pri/T0BUTLER-F1/chart.png` });
    const fetching = adapterWith('xoxb-test').fetchFile?.(foreign, limits);
    await expect(fetching).rejects.toMatchObject({ code: 'slack_file_refused' });
    await expect(fetching).rejects.toThrow(/files\.slack\.com/);
    expect(elsewhere.authorizations).toEqual([]);
  });

  it('refuses plain http and other hosts in production without any request', async () => {
    const slack = adapterWith('xoxb-test', 'https://slack.com/api/');
    const file = { key: 'F1', name: 'a.png', locator: 'http://files.slack.com/files-pri/T1-F1/a.png' };
    await expect(slack.fetchFile?.(file, limits)).rejects.toMatchObject({ code: 'slack_file_refused' });
    const phished = { ...file, locator: 'https://files.slack.com.example.net/files-pri/T1-F1/a.png' };
    await expect(slack.fetchFile?.(phished, limits)).rejects.toMatchObject({ code: 'slack_file_refused' });
  });

  it('does not follow a redirect to another host with the token', async () => {
    const file = fake.files.add({
      name: 'chart.png',
      mimetype: 'image/png',
      bytes: png,
      redirectTo: `${elsewhere.url}/stolen`,
    });
    await expect(adapterWith('xoxb-test').fetchFile?.(inbound(file), limits)).rejects.toBeInstanceOf(
      SlackFileError,
    );
    expect(elsewhere.authorizations).toEqual([]);
  });

  it('throws FileTooLargeError past the limit: by Content-Length, and while streaming without it', async () => {
    const slack = adapterWith('xoxb-test');
    const declared = fake.files.add({ name: 'a.png', mimetype: 'image/png', bytes: png });
    const chunked = fake.files.add({ name: 'b.png', mimetype: 'image/png', bytes: png, chunked: true });
    const small = { ...limits, maxBytes: png.byteLength - 1 };
    for (const file of [declared, chunked]) {
      await expect(slack.fetchFile?.(unsized(file), small)).rejects.toBeInstanceOf(FileTooLargeError);
    }
    const exact = await slack.fetchFile?.(inbound(chunked), { ...limits, maxBytes: png.byteLength });
    expect(exact?.bytes.byteLength).toBe(png.byteLength);
  });

  it('says the app needs files:read when Slack answers its sign-in page', async () => {
    const file = fake.files.add({ name: 'chart.png', mimetype: 'image/png', bytes: png });
    fake.files.readScope = false;
    await expect(adapterWith('xoxb-test').fetchFile?.(inbound(file), limits)).rejects.toThrow(/files:read/);
    fake.files.readScope = true;
    // A token Slack does not serve the file to is sent to sign in (302, then the page).
    const wrongToken = adapterWith('xoxb-someone-else').fetchFile?.(inbound(file), limits);
    await expect(wrongToken).rejects.toMatchObject({ code: 'slack_file_needs_scope' });
    expect(fake.files.downloads(String(file.id))).toBe(0);
  });
});

const threadTs = '1700000000.000100';
const channelTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: threadTs },
  replyTo: '1700000000.000200',
  userId: 'U0ALICE',
};
const dmTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'D0ALICE', thread: 'main' },
  replyTo: '1700000100.000100',
  userId: 'U0ALICE',
};
const outbound = { id: 'file-1', name: 'latency.png', mimeType: 'image/png', bytes: png };

describe('sendFile', () => {
  it("uploads the bytes into the reply's thread and returns Slack's file id", async () => {
    const slack = adapterWith('xoxb-test');
    const channelFile = await slack.sendFile?.(channelTarget, outbound);
    const dmFile = await slack.sendFile?.(dmTarget, outbound);
    expect(
      fake.files.uploads.map(({ id, channel, threadTs, title }) => ({ id, channel, threadTs, title })),
    ).toEqual([
      { id: channelFile, channel: 'C0GENERAL', threadTs, title: 'latency.png' },
      // A DM answer goes in a thread under the person's message.
      { id: dmFile, channel: 'D0ALICE', threadTs: '1700000100.000100', title: 'latency.png' },
    ]);
    expect(fake.files.uploads[0]?.bytes).toEqual(png);
    expect(fake.files.uploads[0]?.filename).toBe('latency.png');
    expect(fake.callsTo('files.getUploadURLExternal')[0]?.token).toBe('xoxb-test');
    // The shared file shows in the thread, and crash recovery does not take it for reply text.
    expect(fake.threadMessages('C0GENERAL', threadTs).at(-1)?.files).toHaveLength(1);
    expect(
      await slack.findUnrecordedReplies?.(channelTarget, { after: channelTarget.replyTo ?? '', known: [] }),
    ).toEqual([]);
  });

  it('names the step that failed', async () => {
    const slack = adapterWith('xoxb-test');
    fake.failNext('files.getUploadURLExternal', { error: 'invalid_auth' });
    await expect(slack.sendFile?.(channelTarget, outbound)).rejects.toThrow(
      'Slack files.getUploadURLExternal failed: invalid_auth',
    );
    fake.files.failNextUpload(500);
    await expect(slack.sendFile?.(channelTarget, outbound)).rejects.toThrow(
      /Uploading latency\.png to Slack's upload URL failed: it answered HTTP 500/,
    );
    expect(fake.callsTo('files.completeUploadExternal')).toHaveLength(0);
    fake.failNext('files.completeUploadExternal', { error: 'not_in_channel' });
    await expect(slack.sendFile?.(channelTarget, outbound)).rejects.toThrow(
      'Slack files.completeUploadExternal failed: not_in_channel',
    );
    expect(fake.files.uploads).toEqual([]);
  });
});

describe('thread context', () => {
  it("gives each earlier message's files to the core, but not Butler's own", async () => {
    const root = '1700000000.000100';
    const log = fake.files.add({
      name: 'migrate.log',
      mimetype: 'text/plain',
      bytes: Buffer.from('lock timeout'),
    });
    const chart = fake.files.add({ name: 'chart.png', mimetype: 'image/png', bytes: png });
    const gone = { id: 'F0GONE', mode: 'tombstone' };
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: root,
      user: 'U0BOB',
      text: 'migration log',
      files: [log, gone],
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000150',
      threadTs: root,
      user: 'U0BOB',
      subtype: 'file_share',
      text: '',
      files: [chart],
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000160',
      threadTs: root,
      user: botUserId,
      botId,
      text: 'here is the graph',
      files: [fake.files.add({ name: 'graph.png', mimetype: 'image/png', bytes: png })],
    });
    const message = {
      kind: 'message' as const,
      address: { platform: 'slack' as const, workspace: team, channel: 'C0GENERAL', thread: root },
      messageId: '1700000000.000200',
      eventId: 'Ev1',
      dedupKey: 'T0BUTLER:C0GENERAL:1700000000.000200',
      user: { id: 'U0ALICE', name: 'Alice' },
      text: 'why did it fail?',
      isMention: true,
      isDirect: false,
      sentAt: new Date().toISOString(),
    };
    const prepared = await adapterWith('xoxb-test').prepare?.(message, { newConversation: true });
    const context = prepared?.threadContext ?? [];
    expect(context.map((entry) => entry.files?.map((file) => file.key))).toEqual([
      [log.id],
      [chart.id],
      undefined,
    ]);
    expect(context[0]?.files?.[0]?.locator).toBe(log.url_private_download);
    expect(context[0]?.text).toBe('migration log\n[attached file: unnamed; the file was deleted]');
    expect(context[1]?.text).toBe('');
    // Butler's own file is named in its text instead.
    expect(context[2]?.text).toContain('[attached image: graph.png (image/png)');
  });
});

describe('Slack file hosts (Enterprise Grid, presigned CDN URLs)', () => {
  /** A scripted network: each URL answers a redirect or the file; every request is recorded with its token. */
  function network(routes: Record<string, string | Uint8Array>) {
    const seen: Array<{ url: string; authorization: string | undefined }> = [];
    const fetchFile = async (url: URL, init: RequestInit) => {
      const headers = (init.headers ?? {}) as Record<string, string>;
      seen.push({ url: url.href, authorization: headers.authorization });
      const route = routes[url.href];
      if (route === undefined) return new Response('not found', { status: 404 });
      if (typeof route === 'string') return new Response(null, { status: 302, headers: { location: route } });
      return new Response(route, { status: 200, headers: { 'content-type': 'image/png' } });
    };
    return { seen, fetchFile };
  }
  const hosts = fileHosts('https://slack.com/api/');
  const request = (url: string) => ({ url, token: 'xoxb-grid', hosts, maxBytes: 1000, htmlExpected: false });

  it('keeps the token to files-origin.slack.com and drops it for a presigned slack-edge.com URL', async () => {
    const { seen, fetchFile } = network({
      'https://files.slack.com/files-pri/T1-F1/a.png': 'https://files-origin.slack.com/files-pri/T1-F1/a.png',
      'https://files-origin.slack.com/files-pri/T1-F1/a.png': 'https://cdn-1.slack-edge.com/a.png?sig=abc',
      'https://cdn-1.slack-edge.com/a.png?sig=abc': png,
    });
    const { bytes } = await downloadSlackFile(
      fetchFile,
      request('https://files.slack.com/files-pri/T1-F1/a.png'),
    );
    expect(Buffer.from(bytes)).toEqual(png);
    expect(seen.map((hop) => hop.authorization)).toEqual(['Bearer xoxb-grid', 'Bearer xoxb-grid', undefined]);
  });

  it('still refuses lookalike hosts, and a presigned host is never where a download may start', async () => {
    const { seen, fetchFile } = network({
      'https://files.slack.com/files-pri/T1-F2/b.png': 'https://slack-edge.com.example.net/b.png',
    });
    await expect(
      downloadSlackFile(fetchFile, request('https://files.slack.com/files-pri/T1-F2/b.png')),
    ).rejects.toMatchObject({ code: 'slack_file_needs_scope' });
    await expect(
      downloadSlackFile(fetchFile, request('https://cdn-1.slack-edge.com/b.png')),
    ).rejects.toMatchObject({ code: 'slack_file_refused' });
    expect(seen.map((hop) => hop.url)).toEqual(['https://files.slack.com/files-pri/T1-F2/b.png']);
  });
});
