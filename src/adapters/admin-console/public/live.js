// Follows Butler's live events (`GET /api/v1/events`) for as long as the page is open: reconnects with
// exponential backoff and jitter when the stream drops, and stops for good when the key is refused.

const firstDelayMs = 1_000;
const longestDelayMs = 30_000;
/** A stream that stayed up this long was healthy: the next drop starts the backoff over. */
const healthyMs = 10_000;

/**
 * `onEvent(event)` for each live event; `onState(state, detail)` with state `connecting`, `live`,
 * `waiting` (detail: milliseconds until the next try) or `refused` (detail: the ApiFailure).
 * Returns a function that stops following.
 */
export function followLiveEvents(api, { onEvent, onState }) {
  let stopped = false;
  let delay = firstDelayMs;
  let controller;
  let timer;

  async function connect() {
    controller = new AbortController();
    let openedAt;
    onState('connecting');
    try {
      await api.stream('/events', (event) => onEvent(event.data), {
        signal: controller.signal,
        headers: { accept: 'text/event-stream' },
        onOpen: () => {
          openedAt = Date.now();
          onState('live');
        },
      });
    } catch (error) {
      if (stopped) return;
      if (error.status === 401 || error.status === 403) return onState('refused', error);
    }
    if (stopped) return;
    if (openedAt !== undefined && Date.now() - openedAt > healthyMs) delay = firstDelayMs;
    const wait = delay + Math.round(Math.random() * delay * 0.3);
    delay = Math.min(delay * 2, longestDelayMs);
    onState('waiting', wait);
    timer = setTimeout(connect, wait);
  }

  connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    controller?.abort();
  };
}
