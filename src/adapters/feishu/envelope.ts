import { PayloadError } from '../../core/contracts/errors.js';
import { decryptPayload } from './cipher.js';
import { asRecord, type JsonRecord, recordField, stringField } from './fields.js';

/**
 * What a webhook body is, once decrypted: the URL-verification handshake or an event/callback.
 * v2 envelopes carry the Verification Token in `header.token`, v1 and the handshake in `token`.
 */
export type FeishuEnvelope =
  | { kind: 'challenge'; challenge: string; token: string | undefined }
  | {
      kind: 'event';
      payload: JsonRecord;
      token: string | undefined;
      eventType: string | undefined;
      eventId: string | undefined;
    };

export function parseJsonObject(text: string): JsonRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new PayloadError('Feishu payload is not valid JSON');
  }
  const record = asRecord(parsed);
  if (!record) throw new PayloadError('Feishu payload is not a JSON object');
  return record;
}

/** Parses the raw body and decrypts `{"encrypt": …}` when an Encrypt Key is configured. */
export function openEnvelope(
  rawBody: Buffer,
  encryptKey: string | undefined,
): { payload: JsonRecord; encrypted: boolean } {
  const outer = parseJsonObject(rawBody.toString('utf8'));
  const encrypted = outer.encrypt;
  if (encrypted === undefined) return { payload: outer, encrypted: false };
  if (typeof encrypted !== 'string') throw new PayloadError('Feishu payload has a malformed encrypt field');
  if (!encryptKey)
    throw new PayloadError(
      "Feishu payload is encrypted but the app's Encrypt Key is not set (FEISHU_ENCRYPT_KEY)",
    );
  return { payload: parseJsonObject(decryptPayload(encrypted, encryptKey)), encrypted: true };
}

export function classifyEnvelope(payload: JsonRecord): FeishuEnvelope {
  if (payload.type === 'url_verification') {
    const challenge = stringField(payload, 'challenge');
    if (!challenge) throw new PayloadError('Feishu url_verification has no challenge');
    return { kind: 'challenge', challenge, token: stringField(payload, 'token') };
  }
  if (payload.schema !== undefined) {
    const header = recordField(payload, 'header');
    if (!header) throw new PayloadError('Feishu v2 event has no header');
    return {
      kind: 'event',
      payload,
      token: stringField(header, 'token'),
      eventType: stringField(header, 'event_type'),
      eventId: stringField(header, 'event_id'),
    };
  }
  if (payload.type === 'event_callback') {
    return {
      kind: 'event',
      payload,
      token: stringField(payload, 'token'),
      eventType: stringField(recordField(payload, 'event'), 'type'),
      eventId: stringField(payload, 'uuid'),
    };
  }
  throw new PayloadError('Feishu payload is neither an event nor a url_verification');
}
