import { ButlerError } from '../../core/contracts/errors.js';
import { FileTooLargeError } from '../../core/contracts/files.js';
import { readCappedBytes } from '../../core/tools/http-request.js';

/**
 * Downloading and uploading file bytes on Slack's file host, with the bot token kept to Slack. The fetch
 * comes from slack-api.ts (the adapter's one door to the network); these functions decide where the token
 * may go, follow nothing elsewhere, and stop reading at the size limit.
 *
 * Slack serves `url_private`/`url_private_download` from files.slack.com to `Authorization: Bearer <bot
 * token>`; without `files:read` it answers an HTML login page (platforms.md "Slack files"). Upload URLs from
 * files.getUploadURLExternal are on the same host (`https://files.slack.com/upload/v1/…`, method page).
 * Enterprise Grid redirects downloads to files-origin.slack.com (the token goes along), and large files come
 * from presigned URLs on *.slack-edge.com or slack-files.com (followed without the token: platforms.md
 * "Checked 2026-11-27", Slack files).
 */

export type FileFetch = (url: URL, init: RequestInit) => Promise<Response>;

/** Slack's host for file downloads and uploads, and Enterprise Grid's origin for downloads. */
const slackFileHost = 'files.slack.com';
const gridFileHost = 'files-origin.slack.com';
/** Slack's CDN for presigned file URLs: followed over https, never with the token. */
const presignedHost = (hostname: string) =>
  hostname === 'slack-files.com' ||
  hostname.endsWith('.slack-files.com') ||
  hostname.endsWith('.slack-edge.com');
/** A transfer gets this long: a large file over a slow link, not a hung one forever. */
const fileTransferTimeoutMs = 60_000;
const maxRedirects = 3;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

type SlackFileErrorCode =
  | 'slack_file_refused'
  | 'slack_file_needs_scope'
  | 'slack_file_failed'
  | 'slack_upload_failed';

export class SlackFileError extends ButlerError {
  constructor(code: SlackFileErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * Where the bot token may go: Slack's file host, the configured API's host, and `files.` under it (GovSlack's
 * API is slack-gov.com; its files are taken to be on files.slack-gov.com, not checked), over https.
 */
export interface FileHosts {
  hosts: ReadonlySet<string>;
  /** Plain http, only when the API itself is configured over http (a local stand-in in tests). */
  allowHttp: boolean;
}

export function fileHosts(apiUrl: string): FileHosts {
  const api = new URL(apiUrl);
  const hosts = new Set([slackFileHost, gridFileHost, api.host, `files.${api.hostname}`]);
  return { hosts, allowHttp: api.protocol === 'http:' };
}

function secureScheme(url: URL, allowed: FileHosts): boolean {
  return url.protocol === 'https:' || (allowed.allowHttp && url.protocol === 'http:');
}

function tokenMayGoTo(url: URL, allowed: FileHosts): boolean {
  return secureScheme(url, allowed) && allowed.hosts.has(url.host);
}

/** A presigned URL on Slack's CDN: it carries its own signature, so the token does not go along. */
function presigned(url: URL): boolean {
  return url.protocol === 'https:' && url.port === '' && presignedHost(url.hostname);
}

function parsedUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** The media type without parameters ("text/html; charset=utf-8" → "text/html"). */
function mediaType(contentType: string | null): string | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

const scopeHint = 'the Slack app needs the files:read scope (add it in the manifest and reinstall the app)';

/** Reads the body into memory, at most `maxBytes`: past that it cancels the stream and throws. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new FileTooLargeError(maxBytes);
  }
  const { bytes, cut } = await readCappedBytes(response.body, maxBytes);
  if (cut) throw new FileTooLargeError(maxBytes);
  return bytes;
}

function transferFailed(
  code: SlackFileErrorCode,
  what: string,
  error: unknown,
  signal?: AbortSignal,
): unknown {
  if (signal?.aborted || error instanceof ButlerError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new SlackFileError(code, `${what} failed: ${reason}`, { cause: error });
}

export interface DownloadRequest {
  url: string;
  token: string;
  hosts: FileHosts;
  maxBytes: number;
  /** The file itself is HTML: an HTML answer is then the file, not Slack's login page. */
  htmlExpected: boolean;
  signal?: AbortSignal | undefined;
}

/** The file's bytes and the type Slack served them with. */
export async function downloadSlackFile(
  fetchFile: FileFetch,
  request: DownloadRequest,
): Promise<{ bytes: Uint8Array; mediaType: string | undefined }> {
  let target = parsedUrl(request.url);
  if (!target || !tokenMayGoTo(target, request.hosts)) {
    throw new SlackFileError(
      'slack_file_refused',
      `Butler downloads Slack files only from ${slackFileHost} over https; refused ${target?.origin ?? 'a malformed URL'}`,
    );
  }
  try {
    for (let hop = 0; ; hop++) {
      const withToken = tokenMayGoTo(target, request.hosts);
      const response = await fetchFile(target, {
        headers: withToken ? { authorization: `Bearer ${request.token}` } : {},
        redirect: 'manual',
        signal: withTimeout(request.signal),
      });
      const location = redirectStatuses.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return await fileAnswer(response, request);
      await response.body?.cancel();
      const next = new URL(location, target);
      // Slack sends a request it will not serve to its sign-in page, on the workspace's own host.
      if (!tokenMayGoTo(next, request.hosts) && !presigned(next)) {
        throw new SlackFileError(
          'slack_file_needs_scope',
          `Slack redirected the download to ${next.origin} instead of serving the file (not followed): ${scopeHint}`,
        );
      }
      if (hop === maxRedirects) {
        throw new SlackFileError('slack_file_failed', `More than ${maxRedirects} redirects for a Slack file`);
      }
      target = next;
    }
  } catch (error) {
    throw transferFailed('slack_file_failed', 'Downloading the Slack file', error, request.signal);
  }
}

async function fileAnswer(
  response: Response,
  request: DownloadRequest,
): Promise<{ bytes: Uint8Array; mediaType: string | undefined }> {
  const type = mediaType(response.headers.get('content-type'));
  if (!response.ok) {
    await response.body?.cancel();
    throw new SlackFileError('slack_file_failed', `Slack answered HTTP ${response.status} for the file`);
  }
  if (type === 'text/html' && !request.htmlExpected) {
    await response.body?.cancel();
    throw new SlackFileError(
      'slack_file_needs_scope',
      `Slack answered a sign-in page, not the file: ${scopeHint}`,
    );
  }
  return { bytes: await readCapped(response, request.maxBytes), mediaType: type };
}

/**
 * POSTs the bytes, raw, to the upload URL files.getUploadURLExternal gave (Slack answers 200 when it took
 * them). The token goes along only to Slack's file host, as the official client sends it.
 */
export async function postUpload(
  fetchFile: FileFetch,
  request: { url: string; token: string; hosts: FileHosts; bytes: Uint8Array; filename: string },
): Promise<void> {
  const step = `Uploading ${request.filename} to Slack's upload URL`;
  const target = parsedUrl(request.url);
  if (!target || !secureScheme(target, request.hosts)) {
    throw new SlackFileError('slack_upload_failed', `${step} refused: it is not an https URL`);
  }
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (tokenMayGoTo(target, request.hosts)) headers.authorization = `Bearer ${request.token}`;
  let response: Response;
  try {
    response = await fetchFile(target, {
      method: 'POST',
      headers,
      body: request.bytes,
      redirect: 'error',
      signal: withTimeout(undefined),
    });
  } catch (error) {
    throw transferFailed('slack_upload_failed', step, error);
  }
  await response.body?.cancel();
  if (response.status !== 200) {
    throw new SlackFileError('slack_upload_failed', `${step} failed: it answered HTTP ${response.status}`);
  }
}

function withTimeout(signal: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(fileTransferTimeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}
