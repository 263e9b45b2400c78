/**
 * The fake Feishu Open API's files: message resources (`GET /open-apis/im/v1/messages/:message_id/resources/
 * :file_key?type=image|file`), image and file uploads (`POST /open-apis/im/v1/images`, `/files`, multipart), and
 * the uploaded keys `image` and `file` messages refer to. Kept apart from `fake-feishu-api.ts`, which routes here
 * after checking the tenant token.
 *
 * As open.feishu.cn documents them: downloads need the message and key to match and `type` to be image (images,
 * also in posts) or file; uploads take `image_type` (message|avatar) and `image` (at most 10 MB, not empty), or
 * `file_type` (opus|mp4|pdf|doc|xls|ppt|stream), `file_name`, `file` (at most 30 MB, not empty) and an optional
 * `duration`. Error codes other than 234001 (invalid request param) and 99991672 (scope missing) are the fake's.
 */

type Json = Record<string, unknown>;
export interface FakeAnswer {
  status: number;
  body: Json;
  /** A binary answer (a download) instead of the JSON body; `body` is what gets recorded. */
  download?: { bytes: Buffer; contentType: string };
}

export const invalidParamCode = 234001;
/** The fake's code for a message that has no such resource, and for an upload over its limit. */
export const resourceNotFoundCode = 234003;
export const uploadTooLargeCode = 234006;
const scopeMissingCode = 99991672;

export const imageUploadLimitBytes = 10 * 1024 * 1024;
export const fileUploadLimitBytes = 30 * 1024 * 1024;
const fileTypes = new Set(['opus', 'mp4', 'pdf', 'doc', 'xls', 'ppt', 'stream']);

export interface FormPart {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  data: Buffer;
}

/** Parses multipart/form-data; undefined when the body is not well formed or a field comes twice. */
export function parseMultipart(
  raw: Buffer,
  contentType: string | undefined,
): Map<string, FormPart> | undefined {
  const boundary = /^multipart\/form-data;.*boundary=("?)([^";]+)\1/i.exec(contentType ?? '')?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const parts = new Map<string, FormPart>();
  let start = raw.indexOf(delimiter);
  if (start !== 0) return undefined;
  for (;;) {
    const afterDelimiter = start + delimiter.length;
    if (raw.subarray(afterDelimiter, afterDelimiter + 2).toString() === '--') return parts;
    const headersEnd = raw.indexOf('\r\n\r\n', afterDelimiter);
    const next = raw.indexOf(delimiter, headersEnd);
    if (headersEnd < 0 || next < 0) return undefined;
    const headers = raw.subarray(afterDelimiter + 2, headersEnd).toString('utf8');
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    if (!name || parts.has(name)) return undefined;
    parts.set(name, {
      name,
      filename: /\bfilename="([^"]*)"/.exec(disposition)?.[1],
      contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1],
      // The part's data ends with the CRLF before the next delimiter.
      data: raw.subarray(headersEnd + 4, next - 2),
    });
    start = next;
  }
}

export interface FakeUpload {
  key: string;
  kind: 'image' | 'file';
  bytes: Buffer;
  imageType?: string;
  fileType?: string;
  fileName?: string;
}

interface FakeResource {
  type: 'image' | 'file';
  bytes: Buffer;
  contentType: string;
}

export interface FileCall {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
}

const error = (code: number, msg: string, status = 400): FakeAnswer => ({ status, body: { code, msg } });
const scopeRefusal = (scopes: string): FakeAnswer =>
  error(scopeMissingCode, `Access denied. One of the following scopes is required: [${scopes}].`);

export class FakeFeishuFiles {
  /** Uploaded images and files by key. */
  readonly uploads = new Map<string, FakeUpload>();
  /** When true, downloads and uploads answer like an app without their scopes (code 99991672). */
  scopeMissing = false;
  private readonly resources = new Map<string, FakeResource>();
  private readonly served = new Map<string, number>();
  private counter = 0;

  /** A file or image a (received) message carries, served to the bot by message id, key and type. */
  addResource(
    messageId: string,
    fileKey: string,
    resource: { type: 'image' | 'file'; bytes: Buffer | string; contentType: string },
  ): void {
    const bytes = typeof resource.bytes === 'string' ? Buffer.from(resource.bytes) : resource.bytes;
    this.resources.set(`${messageId}/${fileKey}`, { ...resource, bytes });
  }

  /** How often a resource was downloaded whole. */
  downloads(messageId: string, fileKey: string): number {
    return this.served.get(`${messageId}/${fileKey}`) ?? 0;
  }

  route(call: FileCall, raw: Buffer): FakeAnswer | undefined {
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(call.path);
    if (call.method === 'GET' && resource) {
      return this.download(
        decodeURIComponent(resource[1] as string),
        decodeURIComponent(resource[2] as string),
        call.query.type,
      );
    }
    if (call.method === 'POST' && call.path === '/open-apis/im/v1/images')
      return this.upload('image', call, raw);
    if (call.method === 'POST' && call.path === '/open-apis/im/v1/files')
      return this.upload('file', call, raw);
    return undefined;
  }

  /** The upload an `image` or `file` message refers to, or Feishu's refusal when it names no upload of that kind. */
  attachment(msgType: 'image' | 'file', content: Json): FakeUpload | FakeAnswer {
    const key = content[msgType === 'image' ? 'image_key' : 'file_key'];
    const upload = typeof key === 'string' ? this.uploads.get(key) : undefined;
    if (!upload || upload.kind !== msgType || upload.imageType === 'avatar') {
      return error(230001, `invalid ${msgType}_key`);
    }
    return upload;
  }

  private download(messageId: string, fileKey: string, type: string | undefined): FakeAnswer {
    if (this.scopeMissing)
      return scopeRefusal('im:message, im:message:readonly, im:message.history:readonly');
    if (type !== 'image' && type !== 'file') return error(invalidParamCode, 'Invalid request param: type');
    const key = `${messageId}/${fileKey}`;
    const resource = this.resources.get(key);
    if (resource?.type !== type) return error(resourceNotFoundCode, 'resource not found in this message');
    this.served.set(key, (this.served.get(key) ?? 0) + 1);
    return {
      status: 200,
      body: { code: 0 },
      download: { bytes: resource.bytes, contentType: resource.contentType },
    };
  }

  private upload(kind: 'image' | 'file', call: FileCall, raw: Buffer): FakeAnswer {
    if (this.scopeMissing) return scopeRefusal('im:resource, im:resource:upload');
    const form = parseMultipart(raw, call.contentType);
    if (!form) return error(invalidParamCode, 'Invalid request param: not multipart/form-data');
    const text = (name: string) => form.get(name)?.data.toString('utf8');
    const allowed =
      kind === 'image' ? ['image_type', 'image'] : ['file_type', 'file_name', 'file', 'duration'];
    const unknown = [...form.keys()].find((name) => !allowed.includes(name));
    if (unknown) return error(invalidParamCode, `Invalid request param: unknown field ${unknown}`);
    const bytes = form.get(kind)?.data;
    if (!bytes || bytes.length === 0)
      return error(invalidParamCode, `Invalid request param: ${kind} is empty`);
    const limit = kind === 'image' ? imageUploadLimitBytes : fileUploadLimitBytes;
    if (bytes.length > limit) return error(uploadTooLargeCode, `${kind} size exceeds ${limit} bytes`);
    this.counter += 1;
    if (kind === 'image') {
      const imageType = text('image_type');
      if (imageType !== 'message' && imageType !== 'avatar')
        return error(invalidParamCode, 'Invalid request param: image_type');
      const key = `img_v3_fake_${this.counter}`;
      this.uploads.set(key, { key, kind, bytes: Buffer.from(bytes), imageType });
      return { status: 200, body: { code: 0, msg: 'success', data: { image_key: key } } };
    }
    const fileType = text('file_type');
    const fileName = text('file_name');
    if (!fileType || !fileTypes.has(fileType))
      return error(invalidParamCode, 'Invalid request param: file_type');
    if (!fileName) return error(invalidParamCode, 'Invalid request param: file_name');
    const key = `file_v3_fake_${this.counter}`;
    this.uploads.set(key, { key, kind, bytes: Buffer.from(bytes), fileType, fileName });
    return { status: 200, body: { code: 0, msg: 'success', data: { file_key: key } } };
  }
}
