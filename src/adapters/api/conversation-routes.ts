import { randomUUID } from 'node:crypto';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { encodeConversationKey } from '../../core/contracts/conversation-key.js';
import { NotAllowedError } from '../../core/contracts/errors.js';
import type { ChatUser, ConversationAddress } from '../../core/contracts/events.js';
import type { FileBytes, InboundFile } from '../../core/contracts/files.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { Caller } from './auth.js';
import type { ConversationFeed } from './conversation-feed.js';
import { ApiError, sendJson } from './http-json.js';
import { readMessageBody, type UploadLimits } from './message-body.js';
import type { Route } from './routes.js';
import { conversationId } from './schemas.js';
import { SseStream } from './sse.js';
import type { StreamSlots } from './stream-slots.js';

/**
 * Talking to Butler over HTTP. A message goes through the durable inbox like any chat message; the response
 * streams that turn's events. A client that disconnects does not cancel the turn: it finishes and is stored,
 * and `GET …/events` with `Last-Event-ID` reads it, or the continuation after an approval.
 */

export interface ConversationRouteDependencies {
  intake: ButlerIntake;
  feed: ConversationFeed;
  logger: Logger;
  /** A stream with nothing new for this long ends (the turn is still read later with GET …/events). */
  idleMs: number;
  streams: Set<SseStream>;
  slots: StreamSlots;
  uploads: UploadLimits;
}

/** A key's conversations are its own: the key's name is the workspace, the id the channel. */
export function apiAddress(caller: Caller, id: string): ConversationAddress {
  return { platform: 'api', workspace: caller.name, channel: id, thread: 'main' };
}

export function checkedId(raw: string | undefined): string {
  const parsed = conversationId.safeParse(raw);
  if (!parsed.success)
    throw new ApiError(400, 'invalid_conversation_id', parsed.error.issues[0]?.message ?? '');
  return parsed.data;
}

/** `Last-Event-ID` (what EventSource sends on reconnect) or `?after=`; 0 = from the start. */
function resumeFrom(header: string | string[] | undefined, query: URLSearchParams): number {
  // An empty header is no header: EventSource sends none before its first event id.
  const fromHeader = (Array.isArray(header) ? header[0] : header)?.trim() || undefined;
  const raw = fromHeader ?? query.get('after') ?? '0';
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 0)
    throw new ApiError(400, 'invalid_event_id', 'Last-Event-ID must be an event id.');
  return id;
}

export function conversationRoutes(deps: ConversationRouteDependencies): Route[] {
  const { intake, feed } = deps;
  return [
    {
      method: 'POST',
      pattern: /^\/conversations\/([^/]+)\/messages$/,
      scope: 'chat',
      async handle({ request, response, caller, params }) {
        const id = checkedId(params[0]);
        const body = await readMessageBody(request, deps.uploads);
        const address = apiAddress(caller, id);
        const user = {
          id: caller.name,
          name: caller.name,
          ...(body.timezone ? { timezone: body.timezone } : {}),
        };
        const key = encodeConversationKey(address);
        const idempotencyKey = request.headers['idempotency-key'];
        const messageId = randomUUID();
        // A namespace of its own: a key named `approval` once sent `approval:<batch id>`, the very
        // dedup key of that batch's continuation, which then could never be enqueued.
        const dedupKey =
          typeof idempotencyKey === 'string' ? `idempotency:${caller.name}:${idempotencyKey}` : messageId;
        // Files are read and stored only for a message Butler would take: not a repeat, not over the limit.
        if (body.files.length > 0) await refuseEarly(intake, { address, user, dedupKey });
        // Over the stream cap the message is refused before Butler takes it: a retry sends it once.
        const release = deps.slots.take(caller.name);
        try {
          const files = await share(intake, address, user, body.files);
          const after = await feed.lastId(key);
          // Only a message Butler took is shown, once, and before the events of the turn that answers it when this
          // process runs that turn (it is woken after this). A worker polling the inbox may claim the message first
          // and write its first events ahead of it: writing both in one transaction would close that gap.
          const showMessage = async () => {
            await feed.append(key, [{ type: 'message', role: 'user', content: body.text }]);
          };
          const accepted = await intake.accept(
            {
              kind: 'message',
              address,
              messageId,
              eventId: messageId,
              dedupKey,
              user,
              text: body.text,
              ...(files.length > 0 ? { files } : {}),
              isMention: true,
              isDirect: true,
              sentAt: new Date().toISOString(),
            },
            showMessage,
          );
          if (accepted.status === 'duplicate')
            throw new ApiError(
              409,
              'duplicate',
              'A message with this Idempotency-Key was already sent; read its events.',
            );
          if (accepted.status === 'ignored')
            throw new ApiError(403, 'not_allowed', 'This conversation is not allowed.');
          // "stop" while a turn runs stops it: no turn of its own to stream.
          if (accepted.status === 'stopping') return sendJson(response, 202, { status: 'stopping' });
          // A turn already running answers earlier messages: this stream ends with the turn that answers this one.
          response.setHeader('butler-message-id', messageId);
          const stream = new SseStream(response, deps.streams);
          await feed.follow(key, after, stream, deps.idleMs, messageId);
          stream.end();
        } finally {
          release();
        }
      },
    },
    {
      method: 'POST',
      pattern: /^\/conversations\/([^/]+)\/stop$/,
      scope: 'chat',
      async handle({ response, caller, params }) {
        const address = apiAddress(caller, checkedId(params[0]));
        const status = await intake.stop({
          address,
          user: { id: caller.name, name: caller.name },
          isDirect: true,
        });
        sendJson(response, status === 'stopping' ? 202 : 200, { status });
      },
    },
    {
      method: 'GET',
      pattern: /^\/conversations\/([^/]+)\/events$/,
      scope: 'chat',
      async handle({ request, response, caller, params, query }) {
        const key = encodeConversationKey(apiAddress(caller, checkedId(params[0])));
        const after = resumeFrom(request.headers['last-event-id'], query);
        if ((await feed.lastId(key)) === 0)
          throw new ApiError(404, 'not_found', 'This key has no conversation with that id.');
        const release = deps.slots.take(caller.name);
        try {
          const stream = new SseStream(response, deps.streams);
          // `follow=false`: every stored event after `after`, then the end; else until the next turn ends.
          if (query.get('follow') === 'false') await feed.readStored(key, after, stream);
          else await feed.follow(key, after, stream, deps.idleMs);
          stream.end();
        } finally {
          release();
        }
      },
    },
  ];
}

/** Refuses, before its files are read, a message Butler would not take: 409 for a repeat, 429 past the limit. */
async function refuseEarly(
  intake: ButlerIntake,
  input: { address: ConversationAddress; user: ChatUser; dedupKey: string },
): Promise<void> {
  const check = await intake.precheck(input);
  if (check === 'duplicate')
    throw new ApiError(
      409,
      'duplicate',
      'A message with this Idempotency-Key was already sent; read its events.',
    );
  if (check === 'rate_limited')
    throw new ApiError(429, 'rate_limited', 'Too many messages this minute; send it again in a minute.');
}

/** Stores each file before the message that names them is accepted (a refused message leaves them unread). */
async function share(
  intake: ButlerIntake,
  address: ConversationAddress,
  user: ChatUser,
  files: readonly FileBytes[],
): Promise<InboundFile[]> {
  const shared: InboundFile[] = [];
  for (const file of files) {
    try {
      shared.push(await intake.shareFile({ address, user, file }));
    } catch (error) {
      if (error instanceof NotAllowedError) throw new ApiError(403, 'not_allowed', error.message);
      throw error;
    }
  }
  return shared;
}
