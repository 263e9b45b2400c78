import { PayloadError } from '../../core/contracts/errors.js';
import type { ChatUser } from '../../core/contracts/events.js';

/** What a verified request to `POST /slack/events` turns out to be. */
export type SlackRequest =
  | { kind: 'url_verification'; challenge: string }
  | { kind: 'ssl_check' }
  | { kind: 'payload'; body: Record<string, unknown> };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PayloadError(`${what} is not valid JSON`);
  }
  if (!isRecord(value)) throw new PayloadError(`${what} is not a JSON object`);
  return value;
}

/**
 * Events arrive as JSON; interactivity (block_actions, view_submission) as a form with one
 * `payload=<JSON>` field. Anything else Slack might post (ssl_check, slash commands) is a plain form.
 */
/** Who clicked or submitted, from Slack's signed interaction payload: the only authority on it. */
export function clickerOf(body: Record<string, unknown>): ChatUser | undefined {
  const user = isRecord(body.user) ? body.user : {};
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  const id = text(user.id);
  if (!id) return undefined;
  const name = text(user.name) ?? text(user.username);
  return name ? { id, name } : { id };
}

export function parseSlackRequest(rawBody: Buffer, contentType: string | undefined): SlackRequest {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const text = rawBody.toString('utf8');
  let body: Record<string, unknown>;
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const payload = form.get('payload');
    if (payload !== null) {
      body = parseJsonObject(payload, 'payload field');
    } else if (form.get('ssl_check') === '1') {
      return { kind: 'ssl_check' };
    } else {
      body = Object.fromEntries(form.entries());
    }
  } else if (mediaType === 'application/json' || mediaType === '') {
    body = parseJsonObject(text, 'request body');
  } else {
    throw new PayloadError(`unsupported content type ${mediaType}`);
  }
  if (body.type === 'url_verification') {
    if (typeof body.challenge !== 'string') throw new PayloadError('url_verification without a challenge');
    return { kind: 'url_verification', challenge: body.challenge };
  }
  return { kind: 'payload', body };
}

/** `X-Slack-Retry-Num` as a number, when present and sane. */
export function parseRetryNumber(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
