import { VerificationError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import { readBody } from '../../http/body.js';
import { type RouteHandler, sendJson } from '../../http/server.js';
import { cardActionEventType } from './dispatcher.js';
import { classifyEnvelope, openEnvelope } from './envelope.js';
import { asRecord, type JsonRecord } from './fields.js';
import { isSigned, readSignatureHeaders, verifySignature, verifyToken } from './verify.js';

export interface WebhookOptions {
  encryptKey: string | undefined;
  verificationToken: string | undefined;
  now: () => number;
  /** Hands a verified, decrypted payload to the SDK's EventDispatcher; resolves to the response body. */
  dispatch: (payload: JsonRecord) => Promise<unknown>;
  logger: Logger;
}

/**
 * `POST /feishu/events` (and `/feishu/card`): verify → decrypt → parse, then dispatch. Verification is ours,
 * over the raw bytes, because the SDK's adapter answers 200 to bad signatures and hashes re-serialised JSON.
 * Failures throw VerificationError (401) or PayloadError (400) before anything is stored.
 */
export function createWebhookHandler(options: WebhookOptions): RouteHandler {
  const { encryptKey, verificationToken, logger } = options;

  return async (request, response) => {
    const rawBody = await readBody(request);
    const headers = readSignatureHeaders(request.headers);
    const signed = isSigned(headers);
    if (encryptKey && signed) {
      verifySignature({ headers, rawBody, encryptKey, nowMilliseconds: options.now() });
    }
    const { payload } = openEnvelope(rawBody, encryptKey);
    const envelope = classifyEnvelope(payload);

    if (envelope.kind === 'challenge') {
      // The handshake may come unsigned (the Go SDK skips the signature for it); it has no side effects.
      if (verificationToken) verifyToken(envelope.token, verificationToken);
      logger.info('answered Feishu url_verification');
      return sendJson(response, 200, { challenge: envelope.challenge });
    }

    if (encryptKey && !signed) throw new VerificationError('Feishu request is missing signature headers');
    if (verificationToken) verifyToken(envelope.token, verificationToken);
    if (!encryptKey && envelope.eventType === cardActionEventType) {
      // Unsigned, a click is only as good as a token every event carries: anyone who saw one could replay a
      // decision or name any approver. Without an Encrypt Key, cards are decided over the long connection.
      logger.error(
        { eventId: envelope.eventId },
        "Feishu card callback refused: approvals over the webhook need the app's Encrypt Key (FEISHU_ENCRYPT_KEY)",
      );
      return sendJson(response, 200, {
        toast: {
          type: 'error',
          content: 'Butler cannot take decisions here until its admin sets an Encrypt Key.',
        },
      });
    }
    logger.debug({ eventId: envelope.eventId, eventType: envelope.eventType }, 'Feishu webhook verified');
    const result = await options.dispatch(payload);
    sendJson(response, 200, asRecord(result) ?? {});
  };
}
