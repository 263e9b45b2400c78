/** Reads server-sent events the way a client would: `id` and `data` lines, blank-line separated. */

export interface SseEvent {
  id: string | undefined;
  data: Record<string, unknown>;
}

function parse(block: string): SseEvent | undefined {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  return data.length > 0 ? { id, data: JSON.parse(data.join('\n')) } : undefined;
}

/** Every event until the server ends the stream, or until `stop` says enough (the client then disconnects). */
export async function readEvents(
  response: Response,
  stop: (event: SseEvent, all: SseEvent[]) => boolean = () => false,
): Promise<SseEvent[]> {
  if (!response.body) return [];
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const event = parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      if (!event) continue;
      events.push(event);
      if (stop(event, events)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

export const types = (events: readonly SseEvent[]) => events.map((event) => event.data.type);
