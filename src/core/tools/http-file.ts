import { basename } from 'node:path';

/**
 * Whether an HTTP tool's answer is a file to send into the conversation rather than text for the model:
 * an attachment (`Content-Disposition: attachment`), or a body that is neither text nor JSON (an image, a
 * PDF, an archive). Its name comes from the header, else from the URL, else from the tool and the type.
 */

const textTypes =
  /^(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|x-ndjson|javascript|yaml|x-yaml))/;

const extensions: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'text/csv': 'csv',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
};

/** The file name a Content-Disposition header gives (RFC 6266: `filename*` first), without folders. */
function dispositionName(disposition: string): string | undefined {
  const extended = /filename\*\s*=\s*[\w-]+'[^']*'([^;]+)/i.exec(disposition)?.[1];
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(disposition);
  let name = plain?.[1] ?? plain?.[2];
  if (extended) {
    try {
      name = decodeURIComponent(extended.trim());
    } catch {
      // A malformed encoding: keep the plain name.
    }
  }
  const base = name ? basename(name.replaceAll('\\', '/')).trim() : '';
  return base && base !== '.' && base !== '..' ? base : undefined;
}

export function responseFile(
  headers: Headers,
  url: URL,
  toolName: string,
): { name: string; mimeType: string } | undefined {
  const disposition = headers.get('content-disposition') ?? '';
  const mimeType =
    (headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() || 'application/octet-stream';
  const attachment = /^\s*attachment/i.test(disposition);
  if (!attachment && (textTypes.test(mimeType) || !headers.get('content-type'))) return undefined;
  const fromUrl = basename(url.pathname);
  const name =
    dispositionName(disposition) ??
    (fromUrl.includes('.') ? fromUrl : `${toolName}.${extensions[mimeType] ?? 'bin'}`);
  return { name, mimeType };
}
