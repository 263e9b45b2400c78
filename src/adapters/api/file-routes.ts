import { decodeConversationKey } from '../../core/contracts/conversation-key.js';
import type { Store } from '../../core/contracts/store.js';
import type { Caller } from './auth.js';
import { ApiError } from './http-json.js';
import type { Route } from './routes.js';

/**
 * Downloads of stored files (what a `file` event links to). A key sees what it may read of conversations:
 * with `read` every conversation's files, else those of its own API conversations. Any other file is
 * answered 404, as if it did not exist.
 */

export const filePath = (apiPrefix: string, id: string) => `${apiPrefix}/files/${encodeURIComponent(id)}`;

function maySee(caller: Caller, conversationKey: string): boolean {
  if (caller.scopes.includes('read')) return true;
  const address = decodeConversationKey(conversationKey);
  return address.platform === 'api' && address.workspace === caller.name;
}

/** A name safe in a header: no folders, quotes or control characters. */
function safeName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const cleaned = name.replace(/[\u0000-\u001f\u007f"\\/]/g, '_').trim();
  return cleaned.replace(/^\.+$/, '') || 'file';
}

/** `attachment` with an ASCII fallback name and the exact name in UTF-8 (RFC 6266, RFC 8187). */
export function attachment(name: string): string {
  const safe = safeName(name);
  const ascii = safe.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(safe).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function fileRoutes(store: Store): Route[] {
  const notFound = () => new ApiError(404, 'not_found', 'No such file.');
  return [
    {
      method: 'GET',
      pattern: /^\/files\/([^/]+)$/,
      scope: 'any',
      async handle({ response, caller, params }) {
        const file = await store.files.get(params[0] ?? '');
        if (!file || !maySee(caller, file.conversationKey)) throw notFound();
        const bytes = await store.files.content(file.sha256);
        if (!bytes) throw notFound();
        response.writeHead(200, {
          'content-type': file.mimeType || 'application/octet-stream',
          'content-length': bytes.byteLength,
          'content-disposition': attachment(file.name),
          'x-content-type-options': 'nosniff',
          // An HTML or SVG file opened anyway runs nothing with this origin's rights.
          'content-security-policy': "default-src 'none'; sandbox",
          'cache-control': 'private, no-store',
        });
        response.end(bytes);
      },
    },
  ];
}
