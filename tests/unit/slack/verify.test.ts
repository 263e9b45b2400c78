import { describe, expect, it } from 'vitest';
import { computeSlackSignature, verifySlackSignature } from '../../../src/adapters/slack/verify.js';
import { VerificationError } from '../../../src/core/contracts/errors.js';

// Slack's worked example (docs.slack.dev "Verifying requests from Slack"), reproduced in platforms.md.
const vector = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

function input(overrides: Partial<Parameters<typeof verifySlackSignature>[0]> = {}) {
  return {
    signingSecret: vector.secret,
    rawBody: Buffer.from(vector.body),
    signature: vector.signature,
    timestamp: vector.timestamp,
    nowSeconds: Number(vector.timestamp) + 10,
    ...overrides,
  };
}

describe('Slack request verification', () => {
  it("reproduces Slack's worked signature", () => {
    expect(computeSlackSignature(vector.secret, vector.timestamp, Buffer.from(vector.body))).toBe(
      vector.signature,
    );
    expect(() => verifySlackSignature(input())).not.toThrow();
  });

  it('accepts timestamps up to 300 s off in both directions', () => {
    expect(() => verifySlackSignature(input({ nowSeconds: Number(vector.timestamp) + 300 }))).not.toThrow();
    expect(() => verifySlackSignature(input({ nowSeconds: Number(vector.timestamp) - 300 }))).not.toThrow();
  });

  it('rejects a stale timestamp', () => {
    expect(() => verifySlackSignature(input({ nowSeconds: Number(vector.timestamp) + 301 }))).toThrow(
      VerificationError,
    );
  });

  it('rejects a timestamp from the future (Bolt would accept it)', () => {
    expect(() => verifySlackSignature(input({ nowSeconds: Number(vector.timestamp) - 301 }))).toThrow(
      /5 minutes/,
    );
  });

  it('rejects a tampered body, a wrong secret, and a malformed signature', () => {
    expect(() => verifySlackSignature(input({ rawBody: Buffer.from(`${vector.body}x`) }))).toThrow(
      VerificationError,
    );
    expect(() => verifySlackSignature(input({ signingSecret: 'other' }))).toThrow(VerificationError);
    expect(() => verifySlackSignature(input({ signature: 'v0=abc' }))).toThrow(VerificationError);
    expect(() => verifySlackSignature(input({ signature: vector.signature.replace('v0=', 'v1=') }))).toThrow(
      VerificationError,
    );
  });

  it('rejects missing or malformed headers', () => {
    expect(() => verifySlackSignature(input({ signature: undefined }))).toThrow(/X-Slack-Signature/);
    expect(() => verifySlackSignature(input({ timestamp: undefined }))).toThrow(/Timestamp/);
    expect(() => verifySlackSignature(input({ timestamp: '1531420618.5' }))).toThrow(/Timestamp/);
  });

  it('signs the exact bytes, not a re-encoding', () => {
    const body = Buffer.from('{"text":"caf\u00e9"}', 'utf8');
    const signature = computeSlackSignature('secret', '100', body);
    expect(() =>
      verifySlackSignature({
        signingSecret: 'secret',
        rawBody: body,
        signature,
        timestamp: '100',
        nowSeconds: 100,
      }),
    ).not.toThrow();
  });
});
