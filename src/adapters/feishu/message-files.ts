import { ButlerError } from '../../core/contracts/errors.js';
import type { InboundFile } from '../../core/contracts/files.js';
import { asRecord, stringField } from './fields.js';
import { parseContent } from './message-content.js';
import { type PostResource, postResources } from './post-content.js';

/**
 * The files a received message carries, as `InboundMessage.files`. Pure functions.
 *
 * `image` `{image_key}`, `file` `{file_key, file_name}`, `media` (a video) `{file_key, image_key, file_name}`, and
 * in a `post` its `img`, `media` and `file` elements and `files[]`. Each is downloaded later through
 * `GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file` ("image" for images, "file" for
 * files, audio and video: open.feishu.cn im-v1/message-resource/get). That endpoint serves neither stickers nor
 * the messages inside a merged forward (code 234043), so those stay notes in the text.
 */

/**
 * Feishu's message ids and resource keys (`om_…`, `img_v3_…`, `file_v3_…`) are letters, digits, `_` and `-`; a key
 * that is anything else came from a crafted message and is never fetched (it would go into the resource URL).
 */
const feishuKey = /^[A-Za-z0-9_-]{1,256}$/;
export const isFeishuKey = (value: string): boolean => feishuKey.test(value);

/** What `fetchFile` needs, stored as the file's JSON `locator`. */
export interface FeishuFileLocator {
  messageId: string;
  fileKey: string;
  type: 'image' | 'file';
}

function inboundFile(messageId: string, resource: PostResource): InboundFile {
  const type = resource.kind === 'image' ? 'image' : 'file';
  const locator: FeishuFileLocator = { messageId, fileKey: resource.fileKey, type };
  const fallbackName =
    resource.kind === 'image'
      ? `image-${resource.fileKey}.png`
      : resource.kind === 'video'
        ? `video-${resource.fileKey}.mp4`
        : `file-${resource.fileKey}`;
  return {
    key: `${messageId}/${resource.fileKey}`,
    name: resource.name ?? fallbackName,
    locator: JSON.stringify(locator),
  };
}

function resources(messageType: string, content: string): PostResource[] {
  const parsed = parseContent(content);
  const name = stringField(parsed, 'file_name');
  const imageKey = stringField(parsed, 'image_key');
  const fileKey = stringField(parsed, 'file_key');
  switch (messageType) {
    case 'image':
      return imageKey ? [{ fileKey: imageKey, name: undefined, kind: 'image' }] : [];
    case 'file':
      return fileKey ? [{ fileKey, name, kind: 'file' }] : [];
    case 'media':
      return fileKey ? [{ fileKey, name, kind: 'video' }] : [];
    case 'post':
      return postResources(parsed);
    default:
      return [];
  }
}

/** The message's own files; none for types whose content the resource API does not serve. */
export function messageFiles(messageId: string, messageType: string, content: string): InboundFile[] {
  if (!isFeishuKey(messageId)) return [];
  return resources(messageType, content)
    .filter((resource) => isFeishuKey(resource.fileKey))
    .map((resource) => inboundFile(messageId, resource));
}

/** Reads a locator `messageFiles` wrote; throws on anything else (a file from another platform). */
export function parseFileLocator(locator: string): FeishuFileLocator {
  let record: ReturnType<typeof asRecord>;
  try {
    record = asRecord(JSON.parse(locator));
  } catch {
    record = undefined;
  }
  const messageId = stringField(record, 'messageId');
  const fileKey = stringField(record, 'fileKey');
  const type = record?.type;
  const valid = messageId && fileKey && isFeishuKey(messageId) && isFeishuKey(fileKey);
  if (!valid || (type !== 'image' && type !== 'file')) {
    throw new ButlerError('feishu_file_locator_invalid', 'Not a Feishu file locator');
  }
  return { messageId, fileKey, type };
}
