import { ButlerError } from '../../core/contracts/errors.js';
import { isRecord } from './parse.js';

/** A failed Web API call; `slackError` is Slack's error string (`not_allowed`, `ratelimited`, …). */
export class SlackApiError extends ButlerError {
  readonly method: string;
  readonly slackError: string;

  constructor(method: string, slackError: string, options?: { cause?: unknown }) {
    super('slack_api_error', `Slack ${method} failed: ${slackError}`, options);
    this.method = method;
    this.slackError = slackError;
  }
}

/** Slack's answers that say the bot token itself is wrong: revoked, expired, or its workspace gone. */
export const tokenRefusals: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
]);

export function toSlackApiError(method: string, error: unknown): SlackApiError {
  if (error instanceof SlackApiError) return error;
  const record = isRecord(error) ? error : {};
  const data = isRecord(record.data) ? record.data : {};
  let slackError = 'request_failed';
  if (record.code === 'slack_webapi_platform_error' && typeof data.error === 'string')
    slackError = data.error;
  else if (record.code === 'slack_webapi_rate_limited_error') slackError = 'ratelimited';
  else if (record.code === 'slack_webapi_http_error') slackError = `http_${String(record.statusCode)}`;
  else if (error instanceof Error && /rate limit/i.test(error.message)) slackError = 'ratelimited';
  return new SlackApiError(method, slackError, { cause: error });
}

/** Log fields for a failure: Slack's error string, never the request (it may hold text or tokens). */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof SlackApiError) return { slackError: error.slackError, method: error.method };
  return { error: error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error' };
}
