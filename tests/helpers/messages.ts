import type { InboundMessage } from '../../src/core/contracts/events.js';

let sequence = 0;

/** A normalized inbound message, as an adapter would produce it. */
export function inboundMessage(overrides: Partial<InboundMessage> & { text: string }): InboundMessage {
  sequence += 1;
  const messageId = overrides.messageId ?? `msg-${Date.now()}-${sequence}`;
  return {
    kind: 'message',
    address: { platform: 'console', workspace: 'local', channel: 'general', thread: 'main' },
    messageId,
    eventId: `event-${messageId}`,
    dedupKey: messageId,
    user: { id: 'ana', name: 'Ana' },
    isMention: true,
    isDirect: true,
    sentAt: new Date().toISOString(),
    ...overrides,
  };
}
