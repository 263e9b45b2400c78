/** One platform message of the reply: a slice of the text, shown in a CardKit card or a patched card. */
export interface Segment {
  start: number;
  /** Fixed once the reply rolled over into the next card; open (to the end of the text) before. */
  end: number | undefined;
  mode: 'cardkit' | 'patch';
  messageId: string | undefined;
  cardId: string | undefined;
  sequence: number;
  openedAt: number;
  shown: string | undefined;
  /** Text offset up to which `shown` reflects the reply. */
  shownEnd: number;
  failures: number;
  closed: boolean;
  /** The card shows the Stop button. */
  stoppable: boolean;
}

/** A segment that has shown nothing yet, from text offset `start` on. */
export function openSegment(start: number, mode: Segment['mode'], now: number): Segment {
  return {
    start,
    end: undefined,
    mode,
    messageId: undefined,
    cardId: undefined,
    sequence: 0,
    openedAt: now,
    shown: undefined,
    shownEnd: start,
    failures: 0,
    closed: false,
    stoppable: false,
  };
}

/**
 * The final text the reply must show, given what was streamed: when the core rewrote it (it does not extend
 * what was streamed), every segment is clamped to it so none points past its end. Returns the final text.
 */
export function adoptFinalText(segments: Segment[], streamed: string, final: string): string {
  if (!final.startsWith(streamed))
    for (const segment of segments) {
      segment.start = Math.min(segment.start, final.length);
      if (segment.end !== undefined) segment.end = Math.min(segment.end, final.length);
    }
  return final;
}
