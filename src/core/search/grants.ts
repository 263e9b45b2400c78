import type { SecretBox } from '../connections/secret-box.js';
import type { InboundMessage } from '../contracts/events.js';

/**
 * Credentials a platform gives with one message (Slack's `action_token`: search as the sender, for a while).
 * The intake seals a message's grant before the inbox stores it, bound to that message's platform and dedup
 * key, so the database holds no usable token and a sealed grant copied onto another message does not open.
 * Only the turn that answers the message opens it.
 */
export class MessageGrants {
  constructor(private readonly box: SecretBox) {}

  /** The message as it may be stored: its grant sealed. */
  sealed(message: InboundMessage): InboundMessage {
    if (message.grant === undefined) return message;
    return { ...message, grant: JSON.stringify(this.box.seal(message.grant, contextOf(message))) };
  }

  /** The grant of a stored message, or undefined when it has none or it does not open (another key, tampering). */
  opened(message: InboundMessage): string | undefined {
    if (message.grant === undefined) return undefined;
    try {
      return this.box.open(JSON.parse(message.grant), contextOf(message));
    } catch {
      return undefined;
    }
  }
}

const contextOf = (message: InboundMessage) =>
  `message grant\0${message.address.platform}\0${message.dedupKey}`;

/** A message without its grant: what is stored when there is no key to seal it with. */
export function withoutGrant(message: InboundMessage): InboundMessage {
  if (message.grant === undefined) return message;
  const { grant: _dropped, ...rest } = message;
  return rest;
}
