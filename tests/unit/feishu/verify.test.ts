import { describe, expect, it } from 'vitest';
import { decryptPayload } from '../../../src/adapters/feishu/cipher.js';
import { classifyEnvelope, openEnvelope } from '../../../src/adapters/feishu/envelope.js';
import { computeSignature, verifySignature, verifyToken } from '../../../src/adapters/feishu/verify.js';
import { PayloadError, VerificationError } from '../../../src/core/contracts/errors.js';
import { challengePayload, delivery, encrypt, messageEvent, testEncryptKey } from './feishu-events.js';

const now = 1_766_000_000_000;

function headersOf(record: Record<string, string>) {
  return {
    timestamp: record['x-lark-request-timestamp'],
    nonce: record['x-lark-request-nonce'],
    signature: record['x-lark-signature'],
  };
}

/** Verifies what Feishu would send for a message event, signed at `timestampSeconds`. */
function verifyDelivery(timestampSeconds: number, options: { signingKey?: string } = {}) {
  const { body, headers } = delivery(messageEvent(), { timestamp: timestampSeconds, ...options });
  return () =>
    verifySignature({
      headers: headersOf(headers),
      rawBody: Buffer.from(body),
      encryptKey: testEncryptKey,
      nowMilliseconds: now,
    });
}

describe('Feishu signature', () => {
  it('accepts a request signed over its exact bytes', () => {
    expect(verifyDelivery(now / 1000)).not.toThrow();
  });

  it('hashes the raw bytes, not re-serialised JSON', () => {
    // Same JSON, different bytes (pretty-printed): a signature over JSON.stringify(parsed) would differ.
    const raw = Buffer.from(JSON.stringify({ encrypt: encrypt('{}') }, null, 2));
    const signature = computeSignature('1766000000', 'n1', testEncryptKey, raw);
    const check = {
      headers: { timestamp: '1766000000', nonce: 'n1', signature },
      encryptKey: testEncryptKey,
      nowMilliseconds: now,
    };
    expect(() => verifySignature({ ...check, rawBody: raw })).not.toThrow();
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString())));
    expect(() => verifySignature({ ...check, rawBody: reserialised })).toThrow(VerificationError);
  });

  it('rejects a forged signature, a missing header and a tampered body', () => {
    expect(verifyDelivery(now / 1000, { signingKey: 'someone-else' })).toThrow(/signature mismatch/);
    const { body, headers } = delivery(messageEvent(), { timestamp: now / 1000 });
    const check = { encryptKey: testEncryptKey, nowMilliseconds: now };
    const unsigned = { ...headersOf(headers), nonce: undefined };
    expect(() => verifySignature({ ...check, headers: unsigned, rawBody: Buffer.from(body) })).toThrow(
      /missing/,
    );
    const tampered = Buffer.from(`${body} `);
    expect(() => verifySignature({ ...check, headers: headersOf(headers), rawBody: tampered })).toThrow(
      /mismatch/,
    );
  });

  it('rejects timestamps more than five minutes off, either way', () => {
    expect(verifyDelivery(now / 1000 - 301)).toThrow(/too old or too new/);
    expect(verifyDelivery(now / 1000 + 301)).toThrow(/too old or too new/);
    expect(verifyDelivery(now / 1000 - 299)).not.toThrow();
  });

  it('checks the verification token in constant time', () => {
    expect(() => verifyToken('token-a', 'token-a')).not.toThrow();
    expect(() => verifyToken('token-b', 'token-a')).toThrow(VerificationError);
    expect(() => verifyToken(undefined, 'token-a')).toThrow(VerificationError);
  });
});

describe('Feishu decryption', () => {
  it('decrypts the official vector', () => {
    expect(decryptPayload('P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=', 'test key')).toBe('hello world');
  });

  it('round-trips with an independent encryptor and rejects garbage', () => {
    expect(decryptPayload(encrypt('{"a":1}'), testEncryptKey)).toBe('{"a":1}');
    expect(() => decryptPayload('bm90IGVuY3J5cHRlZA==', testEncryptKey)).toThrow(PayloadError);
    expect(() => decryptPayload(encrypt('{"a":1}'), 'wrong key')).toThrow(PayloadError);
  });
});

describe('Feishu envelope', () => {
  it('opens encrypted and plain bodies', () => {
    const event = messageEvent();
    const encrypted = Buffer.from(JSON.stringify({ encrypt: encrypt(JSON.stringify(event)) }));
    expect(openEnvelope(encrypted, testEncryptKey)).toEqual({ payload: event, encrypted: true });
    expect(openEnvelope(Buffer.from(JSON.stringify(event)), undefined)).toEqual({
      payload: event,
      encrypted: false,
    });
    expect(() => openEnvelope(encrypted, undefined)).toThrow(PayloadError);
    expect(() => openEnvelope(Buffer.from('{not json'), testEncryptKey)).toThrow(PayloadError);
    expect(() => openEnvelope(Buffer.from('[1,2]'), testEncryptKey)).toThrow(PayloadError);
  });

  it('tells the handshake, v2 and v1 events apart and finds their tokens', () => {
    expect(classifyEnvelope(challengePayload('c-1', 'tok'))).toEqual({
      kind: 'challenge',
      challenge: 'c-1',
      token: 'tok',
    });
    const v2 = classifyEnvelope(messageEvent({ eventId: 'ev-9', token: 'tok2' }));
    expect(v2).toMatchObject({
      kind: 'event',
      token: 'tok2',
      eventId: 'ev-9',
      eventType: 'im.message.receive_v1',
    });
    const v1 = classifyEnvelope({
      uuid: 'u-1',
      token: 'tok1',
      ts: '1',
      type: 'event_callback',
      event: { type: 'message' },
    });
    expect(v1).toMatchObject({ kind: 'event', token: 'tok1', eventId: 'u-1', eventType: 'message' });
    expect(() => classifyEnvelope({ hello: 'world' })).toThrow(PayloadError);
    expect(() => classifyEnvelope({ schema: '2.0' })).toThrow(PayloadError);
  });
});
