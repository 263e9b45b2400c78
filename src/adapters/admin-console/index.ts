import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApprovalTarget } from '../../core/contracts/approval-card.js';
import type { RouteHandler } from '../../http/server.js';

/**
 * The admin console (`/console`): a few static files that talk to the HTTP API with the admin's own key.
 * Plain ES modules, no build step. Only the files in `public/` are served, by exact name, so no request
 * path can reach anything else on disk.
 */

export const consolePrefix = '/console';

/**
 * The console page that shows a request whole: `/console#approval=<id>` for one call, `#batch=<id>` for a
 * card of several. A fragment never reaches the server, so ids stay out of access logs.
 */
export function consoleLink(publicUrl: string): (target: ApprovalTarget) => string {
  return (target) =>
    target.approvalId !== undefined
      ? `${publicUrl}${consolePrefix}#approval=${encodeURIComponent(target.approvalId)}`
      : `${publicUrl}${consolePrefix}#batch=${encodeURIComponent(target.batchId)}`;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The page loads its own scripts and styles and calls the API on the same origin; nothing else. */
const securityHeaders = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function sendText(
  response: Parameters<RouteHandler>[1],
  status: number,
  text: string,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, {
    ...securityHeaders,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

export function createAdminConsole(): { prefixRoutes: Map<string, RouteHandler> } {
  const folder = new URL('./public/', import.meta.url);
  // Listed once: a name is servable only if it was a file of the folder when Butler started.
  const served = new Set(
    readdirSync(fileURLToPath(folder), { withFileTypes: true })
      .filter((entry) => entry.isFile() && contentTypes[extname(entry.name)] !== undefined)
      .map((entry) => entry.name),
  );

  const handler: RouteHandler = async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return sendText(response, 405, 'Method not allowed.\n', { allow: 'GET, HEAD' });
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    // Relative, so that the console also works behind a proxy that mounts Butler under a path.
    if (path === consolePrefix) return sendText(response, 308, 'See console/\n', { location: 'console/' });
    const name = path.slice(consolePrefix.length + 1) || 'index.html';
    if (!served.has(name)) return sendText(response, 404, 'Not found.\n');

    const body = await readFile(new URL(name, folder));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const headers = {
      ...securityHeaders,
      'content-type': contentTypes[extname(name)] ?? 'application/octet-stream',
      // Revalidate every time: a new Butler version must never run with an old script.
      'cache-control': 'no-cache',
      etag,
    };
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, headers);
      return void response.end();
    }
    response.writeHead(200, { ...headers, 'content-length': body.length });
    response.end(request.method === 'HEAD' ? undefined : body);
  };

  return { prefixRoutes: new Map([[consolePrefix, handler]]) };
}
