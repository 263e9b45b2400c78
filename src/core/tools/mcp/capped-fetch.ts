import { type FetchLike, ProtocolErrorCode, type RequestId } from '@modelcontextprotocol/client';
import { ButlerError } from '../../contracts/errors.js';

/**
 * A fetch for the SDK's HTTP transports under which no message from the server takes more than `maxBytes`
 * of Butler's memory. The SDK reads a JSON answer whole and an SSE event whole before parsing it, so an
 * unbounded one (a 200 MB tool result) would all be held, several times over, while it is decoded.
 *
 * Each message is held here until it is complete (the whole body for JSON, up to the blank line that ends
 * an event for SSE) and passed on only then, so the SDK never sees part of one. A message that grows past
 * the cap is dropped and the connection closed; when it answers a request this fetch sent, the SDK is given
 * a JSON-RPC error for that request in its place, so the call fails at once with the reason instead of
 * waiting for its timeout.
 */
export function cappedFetch(maxBytes: number, baseFetch: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    // Redirects are left as they are: the SDK reads their target and cancels their body.
    if (!response.body || (response.status >= 300 && response.status < 400)) return response;
    const requestId = response.ok ? sentRequestId(init) : undefined;
    const isEventStream = mediaType(response.headers.get('content-type')) === 'text/event-stream';
    const body = response.body.pipeThrough(messageCap({ maxBytes, isEventStream, requestId }));
    // The same status and headers: the SDK reads the session id from them.
    return new Response(body, response);
  };
}

/** Why a message was dropped; the error of a stream that had no request to answer. */
class McpResponseTooLargeError extends ButlerError {
  constructor(maxBytes: number) {
    super(
      'mcp_response_too_large',
      `the server's answer was larger than ${maxBytes} bytes (maxResponseBytes); Butler stopped reading it`,
    );
  }
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The id of the JSON-RPC request in a POST body (the SDK sends one message per POST), if it is one. */
function sentRequestId(init: RequestInit | undefined): RequestId | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined;
  try {
    const message: unknown = JSON.parse(init.body);
    if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message))
      return undefined;
    const { id } = message;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

const carriageReturn = 0x0d;
const lineFeed = 0x0a;

/**
 * Finds where SSE events end (after the line terminator of an empty line; CR, LF and CRLF all end a line,
 * as the WHATWG spec says), carrying its state across chunks.
 */
function eventEnds() {
  let lineHasContent = false;
  let afterCarriageReturn = false;
  return (chunk: Uint8Array, onEnd: (end: number) => boolean): boolean => {
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index];
      if (byte === lineFeed && afterCarriageReturn) {
        // The LF of a CRLF: it belongs to the terminator that ended the line at the CR.
        afterCarriageReturn = false;
        continue;
      }
      afterCarriageReturn = byte === carriageReturn;
      if (byte === lineFeed || byte === carriageReturn) {
        if (!lineHasContent && !onEnd(index + 1)) return false;
        lineHasContent = false;
      } else {
        lineHasContent = true;
      }
    }
    return true;
  };
}

function messageCap(options: {
  maxBytes: number;
  isEventStream: boolean;
  requestId: RequestId | undefined;
}): TransformStream<Uint8Array, Uint8Array> {
  const { maxBytes, requestId } = options;
  const findEnds = options.isEventStream ? eventEnds() : undefined;
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  const release = (controller: TransformStreamDefaultController<Uint8Array>) => {
    for (const part of held) controller.enqueue(part);
    held = [];
    heldBytes = 0;
  };
  const tooLarge = (controller: TransformStreamDefaultController<Uint8Array>) => {
    held = [];
    heldBytes = 0;
    const error = new McpResponseTooLargeError(maxBytes);
    if (requestId === undefined) {
      controller.error(error);
      return;
    }
    const answer = JSON.stringify({
      jsonrpc: '2.0',
      id: requestId,
      error: { code: ProtocolErrorCode.InternalError, message: error.message },
    });
    controller.enqueue(new TextEncoder().encode(options.isEventStream ? `data: ${answer}\n\n` : answer));
    // Ends what the SDK reads and cancels the server's body, which closes the connection.
    controller.terminate();
  };
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      const fits = findEnds
        ? findEnds(chunk, (end) => {
            if (heldBytes + end - start > maxBytes) return false;
            held.push(chunk.subarray(start, end));
            release(controller);
            start = end;
            return true;
          })
        : true;
      if (!fits || heldBytes + chunk.length - start > maxBytes) {
        tooLarge(controller);
        return;
      }
      if (start < chunk.length) {
        held.push(chunk.subarray(start));
        heldBytes += chunk.length - start;
      }
    },
    flush(controller) {
      release(controller);
    },
  });
}
