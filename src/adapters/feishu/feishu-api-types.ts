import type { Priority, Share } from '../pacing/index.js';
import type { FeishuBotIdentity } from './bot-identity.js';
import type { JsonRecord } from './fields.js';
import type { FeishuFileLocator } from './message-files.js';
import type { FeishuSearchCalls } from './search-calls.js';

/**
 * What the rest of the adapter sees of Feishu's Open API: `feishu-api.ts` implements it over the Lark SDK, the
 * only file that calls Feishu.
 */

/** Where a message goes: a reply to a message (optionally as a thread reply), or a new message in a chat. */
export interface MessageDestination {
  chatId: string;
  replyTo: string | undefined;
  replyInThread: boolean;
}

export interface OutgoingMessage {
  msgType: 'interactive' | 'text' | 'image' | 'file';
  content: JsonRecord;
}

/** `file_type` of an upload: opus and mp4 are for audio and video messages, `stream` for any other file. */
export type FeishuFileType = 'opus' | 'mp4' | 'pdf' | 'doc' | 'xls' | 'ppt' | 'stream';

export interface DownloadedResource {
  bytes: Uint8Array;
  /** From the answer's Content-Type, without parameters. */
  mimeType: string | undefined;
}

export interface FeishuApi extends FeishuSearchCalls {
  botInfo(): Promise<FeishuBotIdentity>;
  /**
   * A person's display name and time zone from the contact API, by open_id; each undefined when the answer has
   * none (the name needs the field scope `contact:user.base:readonly`). Throws FeishuApiError (`scopeMissing`
   * without an API scope).
   */
  userProfile(openId: string): Promise<FeishuProfile>;
  /**
   * A message as `GET /open-apis/im/v1/messages/:message_id` lists it (raw items): for a merged forward, the
   * message itself and then every message it holds, each naming its forward in `upper_message_id`.
   */
  messageItems(messageId: string): Promise<JsonRecord[]>;
  /**
   * A message of a topic (`omt_…`) to reply under: its oldest one not recalled, or undefined when Feishu lists
   * none. Throws FeishuApiError (`scopeMissing` without a message-reading scope).
   */
  topicMessage(threadId: string): Promise<string | undefined>;
  /** CardKit: creates a card entity from card JSON 2.0; returns its card_id. */
  createCard(card: JsonRecord): Promise<string>;
  /**
   * CardKit: replaces an element's content; `sequence` must grow per card. `priority` `routine` for a frame
   * while the model writes, so a reply's final text goes first on a busy app's budget.
   */
  updateCardElement(
    cardId: string,
    elementId: string,
    content: string,
    sequence: number,
    priority?: Priority,
  ): Promise<void>;
  updateCardSettings(cardId: string, settings: JsonRecord, sequence: number): Promise<void>;
  /** CardKit: removes an element (streaming or not), e.g. the Stop button once the reply is done. */
  deleteCardElement(cardId: string, elementId: string, sequence: number): Promise<void>;
  /** CardKit: adds elements at the end of a card's body; `sequence` must grow per card. */
  appendCardElements(cardId: string, elements: JsonRecord[], sequence: number): Promise<void>;
  /** Returns the new message's id. */
  sendMessage(destination: MessageDestination, message: OutgoingMessage): Promise<string>;
  /** Sends to a person by open_id, into their direct chat with the bot; returns the message and that chat's id. */
  sendToPerson(openId: string, message: OutgoingMessage): Promise<{ messageId: string; chatId: string }>;
  /** Replaces an interactive message's card. */
  patchMessage(messageId: string, card: JsonRecord, priority?: Priority): Promise<void>;
  /** Returns the reaction id. Cosmetic: last in line for its budget; `signal` gives up a wait for room. */
  addReaction(messageId: string, emojiType: string, signal?: AbortSignal): Promise<string>;
  deleteReaction(messageId: string, reactionId: string): Promise<void>;
  /** A streaming reply's part of the app's budget for `endpoint` (each live reply takes one). */
  share(endpoint: 'cardElement.content' | 'message.patch'): Share;
  /**
   * A file or image of a received message (`GET /open-apis/im/v1/messages/:message_id/resources/:file_key`).
   * Reads at most `maxBytes` (FileTooLargeError past it); `signal` stops the download.
   */
  downloadResource(
    locator: FeishuFileLocator,
    options: { maxBytes: number; signal?: AbortSignal | undefined },
  ): Promise<DownloadedResource>;
  /** Uploads an image to send in a message (`image_type=message`); returns its image_key. */
  uploadImage(bytes: Uint8Array): Promise<string>;
  /** Uploads a file to send in a message; returns its file_key. */
  uploadFile(file: { name: string; fileType: FeishuFileType; bytes: Uint8Array }): Promise<string>;
}

/** What the contact API tells of a person. */
export interface FeishuProfile {
  name: string | undefined;
  /** IANA time zone of their profile (`user.time_zone`), when it is one. */
  timezone: string | undefined;
}
