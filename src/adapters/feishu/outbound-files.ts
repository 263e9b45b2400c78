import { ButlerError } from '../../core/contracts/errors.js';
import type { FileBytes } from '../../core/contracts/files.js';
import type { FeishuApi, FeishuFileType, MessageDestination } from './feishu-api-types.js';

/**
 * Sending a file into a chat: an image Feishu shows inline is uploaded as an image and sent as an `image`
 * message; anything else is uploaded as a file and sent as a `file` message (open.feishu.cn im-v1/image/create,
 * im-v1/file/create, and message content types `image {image_key}`, `file {file_key}`).
 */

/** What the image upload takes (JPG, JPEG, PNG, WEBP, GIF, BMP, ICO, TIFF, HEIC), at most 10 MB. */
const inlineImageTypes = new Set([
  'image/png',
  'image/jpeg',
  'image/jpg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/tiff',
  'image/heic',
]);
export const imageLimitBytes = 10 * 1024 * 1024;
/** The file upload takes at most 30 MB, and neither upload takes an empty file. */
export const fileLimitBytes = 30 * 1024 * 1024;

/**
 * The upload's `file_type` by extension. `opus` and `mp4` are left out: they make audio and video messages,
 * which need a duration and a cover; as `stream` such a file is sent like any other.
 */
const fileTypes: Record<string, FeishuFileType> = {
  pdf: 'pdf',
  doc: 'doc',
  docx: 'doc',
  xls: 'xls',
  xlsx: 'xls',
  ppt: 'ppt',
  pptx: 'ppt',
};

export function feishuFileType(name: string): FeishuFileType {
  const extension = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
  return fileTypes[extension] ?? 'stream';
}

export function sendsAsImage(file: Pick<FileBytes, 'mimeType' | 'bytes'>): boolean {
  const mimeType = file.mimeType.split(';')[0]?.trim().toLowerCase() ?? '';
  return inlineImageTypes.has(mimeType) && file.bytes.byteLength <= imageLimitBytes;
}

/** Uploads `file` and posts it to `destination`; returns the message id. An image over 10 MB goes as a file. */
export async function sendFeishuFile(
  api: Pick<FeishuApi, 'uploadImage' | 'uploadFile' | 'sendMessage'>,
  destination: MessageDestination,
  file: FileBytes,
): Promise<string> {
  const size = file.bytes.byteLength;
  if (size === 0)
    throw new ButlerError('feishu_file_empty', `Feishu does not take empty files (${file.name})`);
  if (sendsAsImage(file)) {
    const imageKey = await api.uploadImage(file.bytes);
    return api.sendMessage(destination, { msgType: 'image', content: { image_key: imageKey } });
  }
  if (size > fileLimitBytes) {
    throw new ButlerError(
      'feishu_file_too_large',
      `Feishu takes files up to ${fileLimitBytes / 1024 / 1024} MB; ${file.name} has ${size} bytes`,
    );
  }
  const fileKey = await api.uploadFile({
    name: file.name,
    fileType: feishuFileType(file.name),
    bytes: file.bytes,
  });
  return api.sendMessage(destination, { msgType: 'file', content: { file_key: fileKey } });
}
