import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientMetadataDocument, clientMetadataPath } from '../../core/connections/client-metadata.js';
import { type ConnectionBook, callbackPath, connectPath } from '../../core/connections/connection-book.js';
import type { Logger } from '../../core/contracts/logger.js';
import { escapeHtml, htmlPage, paragraph } from '../../http/html-page.js';
import type { RouteHandler } from '../../http/server.js';

/**
 * The two pages a person's browser sees when connecting an account, under BUTLER_PUBLIC_URL:
 * - `GET /connect/<link>` says what the link connects and offers a button; only the button's POST uses the
 *   single-use link (a mail scanner or a chat's link preview that fetches the URL uses nothing) and sends the
 *   browser on to the server's sign-in;
 * - `GET /oauth/callback` is where the server sends it back: the sign-in completes once, only in the browser
 *   that pressed the button (a cookie of that flow's), and the turns waiting for the connection go on.
 * Pages carry no scripts, are never cached, and send no referrer (the link and the code stay out of logs).
 */

const linkToken = /^[A-Za-z0-9_-]{43}$/;

/**
 * The cookie that binds a flow to the browser that opened its link: one per flow, so two links opened at once
 * both work. With an https public URL it is `Secure` and `__Host-` (no domain, path /), whatever the socket
 * Butler sees (TLS usually ends at a proxy in front of it).
 */
function flowCookie(secure: boolean) {
  const prefix = secure ? '__Host-' : '';
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const name = (flowId: string) => `${prefix}butler-connect-${flowId}`;
  return {
    set: (flowId: string, secret: string, maxAgeSeconds: number) =>
      `${name(flowId)}=${secret}; Max-Age=${maxAgeSeconds}; ${attributes}`,
    clear: (flowId: string) => `${name(flowId)}=; Max-Age=0; ${attributes}`,
    read: (request: IncomingMessage, flowId: string) => cookiesOf(request).get(name(flowId)),
  };
}

function cookiesOf(request: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0) cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
  }
  return cookies;
}

export function createConnectWeb(
  book: ConnectionBook,
  logger: Logger,
  options: { publicUrl: string },
): Map<string, RouteHandler> {
  const cookie = flowCookie(options.publicUrl.startsWith('https:'));
  const connect: RouteHandler = async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://butler');
    const token = url.pathname.slice(connectPath.length);
    if (!linkToken.test(token))
      return htmlPage(response, 404, 'No such link', paragraph('This is not a Connect link.'));
    if (request.method === 'GET' || request.method === 'HEAD') {
      const link = await book.peekLink(token);
      if (!link)
        return htmlPage(
          response,
          410,
          'Link used or expired',
          paragraph('Ask Butler again for a new link to connect.'),
        );
      return htmlPage(
        response,
        200,
        `Connect ${link.server}`,
        paragraph(
          `Butler asks ${link.person} to connect their ${link.server} account. Continue to sign in there; this link works once.`,
        ) +
          `<form method="post"><button style="font:inherit;padding:.5em 1em">Continue to ${escapeHtml(link.server)}</button></form>`,
      );
    }
    if (request.method !== 'POST')
      return htmlPage(response, 405, 'Not allowed', paragraph('Use the link Butler sent.'));
    request.resume();
    try {
      const opened = await book.openLink(token);
      if (!opened.ok) return htmlPage(response, 410, 'Link used or expired', paragraph(opened.reason));
      const maxAge = Math.max(1, Math.ceil((opened.expiresAt.getTime() - Date.now()) / 1000));
      response.writeHead(303, {
        location: opened.url.href,
        'set-cookie': cookie.set(opened.flowId, opened.browserSecret, maxAge),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      response.end();
    } catch (error) {
      logger.warn({ err: error }, 'starting an authorization failed');
      htmlPage(
        response,
        502,
        'Could not reach the sign-in',
        paragraph(`${errorMessage(error)}. Ask Butler again for a new link.`),
      );
    }
  };

  const callback: RouteHandler = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'GET')
      return htmlPage(response, 405, 'Not allowed', paragraph('Only the sign-in comes back here.'));
    const query = new URL(request.url ?? '/', 'http://butler').searchParams;
    const value = (name: string) => query.get(name) ?? undefined;
    let flowId: string | undefined;
    try {
      const state = value('state');
      const code = value('code');
      const error = value('error');
      const iss = value('iss');
      const outcome = await book.complete({
        ...(state ? { state } : {}),
        ...(code ? { code } : {}),
        ...(error ? { error } : {}),
        ...(iss ? { iss } : {}),
        browserSecret: (id) => {
          flowId = id;
          return cookie.read(request, id);
        },
      });
      // The flow is over either way: its cookie goes.
      if (flowId) response.setHeader('set-cookie', cookie.clear(flowId));
      if (!outcome.ok)
        return htmlPage(
          response,
          outcome.refusal === 'other_browser' ? 403 : 400,
          'Not connected',
          paragraph(outcome.reason),
        );
      htmlPage(
        response,
        200,
        `Connected ${outcome.server}`,
        paragraph('You can close this tab: Butler goes on where you asked, using your account.'),
      );
    } catch (error) {
      if (flowId) response.setHeader('set-cookie', cookie.clear(flowId));
      logger.warn({ err: error }, 'completing an authorization failed');
      htmlPage(
        response,
        502,
        'Not connected',
        paragraph(`${errorMessage(error)}. Ask Butler again for a new link.`),
      );
    }
  };

  // Butler's client metadata document, for servers that take its URL as Butler's client id (no secrets in it).
  const document = JSON.stringify(clientMetadataDocument(options.publicUrl));
  const metadata: RouteHandler = async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600' });
    response.end(request.method === 'HEAD' ? undefined : document);
  };

  return new Map([
    [connectPath.replace(/\/$/, ''), connect],
    [callbackPath, callback],
    [clientMetadataPath, metadata],
  ]);
}

/** What went wrong, without anything the error might carry besides its message (never a token). */
const errorMessage = (error: unknown) =>
  error instanceof Error ? error.message.split('\n')[0]?.slice(0, 300) || error.name : 'Unknown error';
