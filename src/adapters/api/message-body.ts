import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { FileBytes } from '../../core/contracts/files.js';
import { formatBytes } from '../../core/text/index.js';
import { ApiError, jsonBodyLimitBytes, parseJson, readLimitedBody } from './http-json.js';
import { describeIssues, messageText, noContent, senderTimezone, sendMessageBody } from './schemas.js';

/**
 * A message sent to Butler: its text and files, from JSON (`files[].data` in base64) or from
 * `multipart/form-data` (a `text` field and file parts, parsed by Node's own fetch implementation).
 */

/** What the files of one message may be (`files:` in the config file). */
export interface UploadLimits {
  maxFileBytes: number;
  maxTurnBytes: number;
  maxFilesPerTurn: number;
}

export interface MessageBody {
  text: string;
  files: FileBytes[];
  /** The sender's IANA time zone, when the client says. */
  timezone?: string;
}

/** A file sent without a type: Butler looks at its bytes and name. */
const unknownType = 'application/octet-stream';

/** Reads and checks a message; 400 for a bad body, 413 past the file limits. */
export async function readMessageBody(request: IncomingMessage, limits: UploadLimits): Promise<MessageBody> {
  // Room for the turn's files in base64 beside the text: what a JSON body of them needs at most.
  const limitBytes = Math.ceil(limits.maxTurnBytes / 3) * 4 + jsonBodyLimitBytes;
  const raw = await readLimitedBody(
    request,
    limitBytes,
    `, files.maxTurnMegabytes allowing ${formatBytes(limits.maxTurnBytes)} of files`,
  );
  const contentType = request.headers['content-type'] ?? '';
  const body = /^multipart\/form-data\b/i.test(contentType)
    ? await fromMultipart(raw, contentType)
    : fromJson(raw);
  checkFiles(body.files, limits);
  return body;
}

function fromJson(raw: Buffer): MessageBody {
  const parsed = sendMessageBody.safeParse(parseJson(raw));
  if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, 'body'));
  return {
    text: parsed.data.text ?? '',
    files: (parsed.data.files ?? []).map((file) => ({
      name: file.name,
      mimeType: file.mimeType ?? unknownType,
      bytes: Buffer.from(file.data, 'base64'),
    })),
    ...(parsed.data.timezone ? { timezone: parsed.data.timezone } : {}),
  };
}

async function fromMultipart(raw: Buffer, contentType: string): Promise<MessageBody> {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), {
      headers: { 'content-type': contentType },
    }).formData();
  } catch {
    throw new ApiError(400, 'invalid_multipart', 'The body is not valid multipart/form-data.');
  }
  let text = '';
  let timezone: string | undefined;
  const files: FileBytes[] = [];
  for (const [field, value] of form) {
    if (typeof value !== 'string')
      files.push({
        name: value.name.trim() || 'file',
        mimeType: value.type.split(';')[0]?.trim() || unknownType,
        bytes: new Uint8Array(await value.arrayBuffer()),
      });
    else if (field === 'text') text = value;
    else if (field === 'timezone') timezone = checked(senderTimezone, value, 'timezone');
    else
      throw new ApiError(
        400,
        'invalid_body',
        `${field}: not a field here (send text, timezone and file parts)`,
      );
  }
  const checkedText = checked(messageText, text, 'text');
  if (checkedText === '' && files.length === 0) throw new ApiError(400, 'invalid_body', `text: ${noContent}`);
  return { text: checkedText, files, ...(timezone ? { timezone } : {}) };
}

/** A form field's value, or 400 naming it. */
function checked(schema: z.ZodType<string>, value: string, field: string): string {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, field));
  return parsed.data;
}

function checkFiles(files: readonly FileBytes[], limits: UploadLimits): void {
  if (files.length > limits.maxFilesPerTurn)
    throw new ApiError(
      400,
      'too_many_files',
      `A message may carry at most ${limits.maxFilesPerTurn} files (files.maxFilesPerTurn); this one has ${files.length}.`,
    );
  for (const file of files)
    if (file.bytes.byteLength > limits.maxFileBytes)
      throw new ApiError(
        413,
        'file_too_large',
        `${file.name} is ${formatBytes(file.bytes.byteLength)}; a file may be at most ${formatBytes(limits.maxFileBytes)} (files.maxFileMegabytes).`,
      );
  const total = files.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  if (total > limits.maxTurnBytes)
    throw new ApiError(
      413,
      'files_too_large',
      `The files are ${formatBytes(total)} in all; one message's may be at most ${formatBytes(limits.maxTurnBytes)} (files.maxTurnMegabytes).`,
    );
}
