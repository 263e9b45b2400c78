import type { ReplyTarget } from '../../core/contracts/adapter.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { MessageDestination } from './feishu-api-types.js';
import { isThreadId } from './normalize.js';

/**
 * Where an answer goes. Direct chats: straight into the chat. Groups: a reply to the user's message, as a thread
 * reply when the conversation is a topic (`omt_…`). Without a message to answer, the thread anchor (a message
 * id) is answered instead; a topic has none, and `FeishuTopics` finds one of its messages.
 */
export function destinationFor(target: ReplyTarget): MessageDestination {
  const { address } = target;
  if (address.thread === mainThread)
    return { chatId: address.channel, replyTo: undefined, replyInThread: false };
  const replyTo = target.replyTo ?? (address.thread.startsWith('om_') ? address.thread : undefined);
  return {
    chatId: address.channel,
    replyTo,
    replyInThread: replyTo !== undefined && isThreadId(address.thread),
  };
}
