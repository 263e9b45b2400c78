import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Slack's files for the fake Slack (fake-slack-api.ts), on the fake's own host as on files.slack.com:
 * - `url_private(_download)` serve a registered file only to `Authorization: Bearer <bot token>` and only
 *   while the app has `files:read`; anything else gets Slack's sign-in page (a 302 to it, or the page itself),
 *   never the bytes (platforms.md "Slack files").
 * - The external upload, strictly: files.getUploadURLExternal needs `filename` and a positive integer
 *   `length`; the POST to `upload_url` must carry exactly `length` bytes (else a non-200, as Slack says);
 *   files.completeUploadExternal needs known, uploaded file ids and a `channel_id` (Slack makes a file
 *   without one private: for Butler that is a bug), and shares the file in the channel or thread.
 */

type Answer = Record<string, unknown>;

export interface CompletedUpload {
  id: string;
  filename: string;
  title: string | undefined;
  channel: string;
  threadTs: string | undefined;
  bytes: Buffer;
  /** The Authorization header the upload POST carried, if any. */
  uploadAuthorization: string | undefined;
}

export interface FakeSlackFiles {
  /** Whether the app has `files:read`: without it Slack answers the sign-in page even to the bot token. */
  readScope: boolean;
  /** A file someone shared; returns its file object as a message's `files[]` lists it. */
  add(file: {
    name: string;
    mimetype: string;
    bytes: Uint8Array;
    /** Served to the bot token as a 302 to here instead of the bytes. */
    redirectTo?: string;
    /** Sent in chunks without Content-Length (a reader cannot know the size up front). */
    chunked?: boolean;
  }): Record<string, unknown>;
  /** How often the file's bytes were served. */
  downloads(id: string): number;
  /** Uploads completed with files.completeUploadExternal, in order. */
  uploads: CompletedUpload[];
  /** The next POST to an upload URL answers this HTTP status (and keeps nothing). */
  failNextUpload(status: number): void;
}

interface StoredFile {
  name: string;
  mimetype: string;
  bytes: Buffer;
  redirectTo: string | undefined;
  chunked: boolean;
}

interface PendingUpload {
  filename: string;
  length: number;
  key: string;
  bytes?: Buffer;
  uploadAuthorization?: string | undefined;
}

export interface FakeSlackFilesRoom {
  files: FakeSlackFiles;
  methods: Record<string, (args: Record<string, unknown>) => Answer>;
  /** Answers the request when it is for a file, an upload URL or the sign-in page; false otherwise. */
  serve(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  reset(): void;
}

const signInPage =
  '<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>';

function str(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

async function bodyBytes(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function createFakeSlackFiles(options: {
  /** The fake's origin with a trailing slash (known once it listens). */
  baseUrl: () => string;
  botToken: string;
  teamId: string;
  /** Posts the message that shows a shared file in the channel or thread. */
  share: (channel: string, threadTs: string | undefined, file: Answer) => void;
}): FakeSlackFilesRoom {
  const stored = new Map<string, StoredFile>();
  const downloads = new Map<string, number>();
  const pending = new Map<string, PendingUpload>();
  const uploadStatuses: number[] = [];
  let counter = 0;
  const fileObject = (id: string, file: { name: string; mimetype: string; size: number }): Answer => {
    const base = `${options.baseUrl()}files-pri/${options.teamId}-${id}`;
    return {
      id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split('.').pop() ?? 'binary',
      size: file.size,
      mode: 'hosted',
      is_external: false,
      url_private: `${base}/${encodeURIComponent(file.name)}`,
      url_private_download: `${base}/download/${encodeURIComponent(file.name)}`,
    };
  };

  const files: FakeSlackFiles = {
    readScope: true,
    add(file) {
      counter += 1;
      const id = `F0FILE${counter}`;
      const bytes = Buffer.from(file.bytes);
      const { name, mimetype, redirectTo } = file;
      stored.set(id, { name, mimetype, bytes, redirectTo, chunked: file.chunked === true });
      return fileObject(id, { name: file.name, mimetype: file.mimetype, size: bytes.byteLength });
    },
    downloads: (id) => downloads.get(id) ?? 0,
    uploads: [],
    failNextUpload(status) {
      uploadStatuses.push(status);
    },
  };

  function serveFile(request: IncomingMessage, response: ServerResponse, id: string): void {
    const file = stored.get(id);
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('file not found');
      return;
    }
    if (request.headers.authorization !== `Bearer ${options.botToken}`) {
      const back = encodeURIComponent(request.url ?? '/');
      response.writeHead(302, { location: `${options.baseUrl()}signin?redir=${back}` }).end();
      return;
    }
    if (!files.readScope) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(signInPage);
      return;
    }
    if (file.redirectTo) {
      response.writeHead(302, { location: file.redirectTo }).end();
      return;
    }
    downloads.set(id, (downloads.get(id) ?? 0) + 1);
    if (file.chunked) {
      const half = Math.ceil(file.bytes.byteLength / 2);
      response.writeHead(200, { 'content-type': file.mimetype });
      response.write(file.bytes.subarray(0, half));
      response.end(file.bytes.subarray(half));
      return;
    }
    response
      .writeHead(200, { 'content-type': file.mimetype, 'content-length': String(file.bytes.byteLength) })
      .end(file.bytes);
  }

  async function receiveUpload(request: IncomingMessage, response: ServerResponse, key: string) {
    const bytes = await bodyBytes(request);
    const upload = [...pending.values()].find((candidate) => candidate.key === key);
    const failure = uploadStatuses.shift();
    if (!upload || request.method !== 'POST') {
      response.writeHead(404).end();
    } else if (failure !== undefined) {
      response.writeHead(failure).end('upload failed');
    } else if (bytes.byteLength !== upload.length) {
      response.writeHead(400).end(`expected ${upload.length} bytes, got ${bytes.byteLength}`);
    } else {
      upload.bytes = bytes;
      upload.uploadAuthorization = request.headers.authorization;
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${bytes.byteLength}`);
    }
  }

  const methods: FakeSlackFilesRoom['methods'] = {
    'files.getUploadURLExternal': (args) => {
      const filename = str(args, 'filename');
      const length = Number(args.length);
      if (!filename || args.length === undefined || !Number.isInteger(length) || length < 0) {
        return { ok: false, error: 'invalid_arguments' };
      }
      // "Typically only occurs when the `length` provided is 0" (method page, missing_argument).
      if (length === 0) return { ok: false, error: 'missing_argument' };
      counter += 1;
      const id = `F0UPLOAD${counter}`;
      const key = randomBytes(8).toString('hex');
      pending.set(id, { filename, length, key });
      return { ok: true, upload_url: `${options.baseUrl()}upload/v1/${key}`, file_id: id };
    },
    'files.completeUploadExternal': (args) => {
      const listed = Array.isArray(args.files) ? (args.files as Answer[]) : [];
      const channel = str(args, 'channel_id');
      if (listed.length === 0 || !channel) return { ok: false, error: 'invalid_arguments' };
      const uploads = listed.map((entry) => ({ entry, upload: pending.get(String(entry.id)) }));
      if (uploads.some(({ upload }) => upload?.bytes === undefined))
        return { ok: false, error: 'file_not_found' };
      const threadTs = str(args, 'thread_ts');
      const shared = uploads.map(({ entry, upload }) => {
        const id = String(entry.id);
        const { filename, bytes, uploadAuthorization } = upload as PendingUpload & { bytes: Buffer };
        pending.delete(id);
        const title = typeof entry.title === 'string' ? entry.title : undefined;
        files.uploads.push({ id, filename, title, channel, threadTs, bytes, uploadAuthorization });
        const object = fileObject(id, {
          name: filename,
          mimetype: 'application/octet-stream',
          size: bytes.length,
        });
        options.share(channel, threadTs, object);
        return { id, title: title ?? filename };
      });
      return { ok: true, files: shared };
    },
  };

  return {
    files,
    methods,
    async serve(request, response) {
      const path = (request.url ?? '').split('?')[0] ?? '';
      const file = /^\/files-pri\/[A-Z0-9]+-([A-Z0-9]+)\//.exec(path);
      const upload = /^\/upload\/v1\/([0-9a-f]+)$/.exec(path);
      if (file?.[1]) serveFile(request, response, file[1]);
      else if (upload?.[1]) await receiveUpload(request, response, upload[1]);
      else if (path === '/signin') response.writeHead(200, { 'content-type': 'text/html' }).end(signInPage);
      else return false;
      return true;
    },
    reset() {
      stored.clear();
      downloads.clear();
      pending.clear();
      uploadStatuses.length = 0;
      files.uploads.length = 0;
      files.readScope = true;
    },
  };
}
