import { openFence } from './markdown-split.js';

/** One Slack message of a reply, and the pure arithmetic on it. */

export const fenceCloser = '\n```';

/** One Slack message of the reply. Its Markdown is `prefix + text[start, end) + closure`. */
export interface Segment {
  /** '' while deferred (not posted yet). */
  ts: string;
  /**
   * `stream`: chat.startStream/appendStream; `static`: posted, then chat.update; `deferred`: nothing sent yet
   * (the workspace's stream budget was spent): it streams once the budget allows, else is posted once at the end.
   */
  mode: 'stream' | 'static' | 'deferred';
  /** A stream Slack still accepts appends on. */
  open: boolean;
  /** Takes no more text (full, or its stream ended). */
  sealed: boolean;
  /** Cut at a break point: seal before adding more. */
  full: boolean;
  /** Reopens a code fence the previous message had to close. */
  prefix: string;
  start: number;
  end: number;
  /** Closes a code fence left open when the message was sealed. */
  closure: string;
  /** Static messages: the Markdown Slack currently shows (undefined when unknown, e.g. resumed). */
  shown: string | undefined;
  /** Where the text Slack shows ends (`start` until the first successful post or edit). */
  shownEnd: number;
  lastCallAt: number;
  /** Posted as a markdown block; cleared for this message alone when Slack refuses its block. */
  markdownBlocks: boolean;
}

export function newSegment(start: number, end: number, prefix: string, full: boolean): Segment {
  return {
    ts: '',
    mode: 'static',
    open: false,
    sealed: false,
    full,
    prefix,
    start,
    end,
    closure: '',
    shown: undefined,
    shownEnd: start,
    lastCallAt: 0,
    markdownBlocks: true,
  };
}

export function segmentContent(segment: Segment, text: string): string {
  return segment.prefix + text.slice(segment.start, segment.end) + segment.closure;
}

/** Room left in `segment` under `limit`, keeping space for a fence closer. */
export function segmentRoom(segment: Segment, limit: number): number {
  return limit - fenceCloser.length - segment.prefix.length - (segment.end - segment.start);
}

/** The line that reopens a code fence this segment leaves open (for the next message), or ''. */
export function fenceReopener(segment: Segment, text: string): string {
  const fence = openFence(segment.prefix + text.slice(segment.start, segment.end));
  return fence ? `${fence}\n` : '';
}

/**
 * A reply's text rewritten at its end (`final` does not extend `text`): the messages from the first difference
 * on are taken out of `segments` (spliced) to be rewritten in place, in order, a stream stopped first.
 */
export function rewriteFrom(
  segments: Segment[],
  text: string,
  final: string,
): {
  text: string;
  affected?: { prefix: string; reusable: Array<{ ts: string; stopFirst: boolean }> };
} {
  if (final.startsWith(text)) return { text: final };
  if (final.length === 0) return { text };
  let common = 0;
  while (common < final.length && final[common] === text[common]) common++;
  const firstAffected = segments.findIndex((segment) => segment.end > common);
  if (firstAffected === -1) return { text: final };
  const affected = segments.splice(firstAffected);
  const reusable = affected
    .filter((segment) => segment.ts)
    .map((segment) => ({ ts: segment.ts, stopFirst: segment.mode === 'stream' && segment.open }));
  return { text: final, affected: { prefix: affected[0]?.prefix ?? '', reusable } };
}
