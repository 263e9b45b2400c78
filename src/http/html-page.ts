import type { ServerResponse } from 'node:http';

/** Text for HTML, every character that could open markup or an attribute escaped. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A paragraph of plain text. */
export const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;

/**
 * A small page a person's browser lands on (a Connect link, an install): not cached, not framed, no script,
 * nothing loaded from elsewhere, and no referrer sent on.
 */
export function htmlPage(response: ServerResponse, status: number, title: string, body: string): void {
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  });
  response.end(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
      `<title>${escapeHtml(title)}</title><body style="font:16px system-ui;max-width:36em;margin:4em auto;padding:0 1em">` +
      `<h1 style="font-size:1.3em">${escapeHtml(title)}</h1>${body}</body></html>`,
  );
}
