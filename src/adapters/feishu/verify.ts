import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { VerificationError } from '../../core/contracts/errors.js';

/** Feishu documents no freshness window; five minutes matches Slack's and bounds replays of captured requests. */
export const maxTimestampSkewSeconds = 300;

export interface SignatureHeaders {
  timestamp: string | undefined;
  nonce: string | undefined;
  signature: string | undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function readSignatureHeaders(headers: IncomingHttpHeaders): SignatureHeaders {
  return {
    timestamp: header(headers, 'x-lark-request-timestamp'),
    nonce: header(headers, 'x-lark-request-nonce'),
    signature: header(headers, 'x-lark-signature'),
  };
}

export function isSigned(headers: SignatureHeaders): boolean {
  return headers.timestamp !== undefined || headers.nonce !== undefined || headers.signature !== undefined;
}

/** hex(SHA-256(timestamp + nonce + encryptKey + body)), over the body's exact bytes. */
export function computeSignature(
  timestamp: string,
  nonce: string,
  encryptKey: string,
  rawBody: Buffer,
): string {
  return createHash('sha256')
    .update(timestamp + nonce + encryptKey, 'utf8')
    .update(rawBody)
    .digest('hex');
}

/** Compares secrets in constant time, whatever their lengths. */
export function secretsEqual(received: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(received), digest(expected));
}

export interface SignatureCheck {
  headers: SignatureHeaders;
  rawBody: Buffer;
  encryptKey: string;
  nowMilliseconds: number;
}

/** Throws VerificationError unless the request is signed with the Encrypt Key and recent. */
export function verifySignature(check: SignatureCheck): void {
  const { timestamp, nonce, signature } = check.headers;
  if (!timestamp || !nonce || !signature)
    throw new VerificationError('Feishu request is missing signature headers');
  if (!/^\d{1,12}$/.test(timestamp)) throw new VerificationError('Feishu request timestamp is malformed');
  const skewSeconds = Math.abs(check.nowMilliseconds / 1000 - Number(timestamp));
  if (skewSeconds > maxTimestampSkewSeconds)
    throw new VerificationError('Feishu request timestamp is too old or too new');
  const expected = computeSignature(timestamp, nonce, check.encryptKey, check.rawBody);
  if (!secretsEqual(signature.toLowerCase(), expected))
    throw new VerificationError('Feishu request signature mismatch');
}

/** Throws VerificationError unless the payload carries the app's Verification Token. */
export function verifyToken(received: string | undefined, expected: string): void {
  if (received === undefined || !secretsEqual(received, expected)) {
    throw new VerificationError('Feishu verification token mismatch');
  }
}
