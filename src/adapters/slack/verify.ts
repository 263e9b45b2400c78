import { createHmac, timingSafeEqual } from 'node:crypto';
import { VerificationError } from '../../core/contracts/errors.js';

/** Slack's replay window. Bolt only rejects old timestamps; we reject future ones too. */
export const maxClockSkewSeconds = 300;

export interface SlackSignatureInput {
  signingSecret: string;
  /** The exact request bytes: the signature covers them, not a re-serialized body. */
  rawBody: Buffer;
  /** `X-Slack-Signature` header. */
  signature: string | undefined;
  /** `X-Slack-Request-Timestamp` header (seconds). */
  timestamp: string | undefined;
  /** Current time in seconds, injected so tests control the clock. */
  nowSeconds: number;
}

export function computeSlackSignature(signingSecret: string, timestamp: string, rawBody: Buffer): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}

/** Throws VerificationError unless the request carries a valid, fresh `v0` signature. */
export function verifySlackSignature(input: SlackSignatureInput): void {
  const { signature, timestamp } = input;
  if (!signature) throw new VerificationError('missing X-Slack-Signature');
  if (!timestamp || !/^\d+$/.test(timestamp))
    throw new VerificationError('missing or malformed X-Slack-Request-Timestamp');
  if (Math.abs(input.nowSeconds - Number(timestamp)) > maxClockSkewSeconds) {
    throw new VerificationError('X-Slack-Request-Timestamp is more than 5 minutes off');
  }
  const expected = Buffer.from(computeSlackSignature(input.signingSecret, timestamp, input.rawBody));
  const received = Buffer.from(signature);
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    throw new VerificationError('X-Slack-Signature does not match');
  }
}
