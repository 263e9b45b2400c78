/**
 * Slack's rate limits as the fake Slack enforces them when asked to (`fake.rateTiers = true`): per method, per
 * app (token), per workspace, at most the documented count in any 60 s; chat.postMessage about once a second
 * per channel (platforms.md "Checked since", Rate tiers, and §5). Over the limit Slack answers HTTP 429 with
 * `Retry-After: <seconds>`; so does this.
 */

const minute = 60_000;
const tiers: Readonly<Record<string, { limit: number; windowMs: number }>> = {
  'chat.startStream': { limit: 20, windowMs: minute },
  'chat.stopStream': { limit: 20, windowMs: minute },
  'chat.update': { limit: 50, windowMs: minute },
  'chat.appendStream': { limit: 100, windowMs: minute },
  'files.getUploadURLExternal': { limit: 100, windowMs: minute },
  'files.completeUploadExternal': { limit: 100, windowMs: minute },
  'agents.sessions.setStatus': { limit: 50, windowMs: minute },
  'assistant.threads.setSuggestedPrompts': { limit: 100, windowMs: minute },
  'users.info': { limit: 100, windowMs: minute },
};
/** "About 1 message/s per channel, short bursts": 3 in any 3 s. */
const postMessagePerChannel = { limit: 3, windowMs: 3000 };

export class FakeRateTiers {
  private readonly calls = new Map<string, number[]>();

  /** Counts a call made `now`; the Retry-After seconds when it is over the limit (and then not counted). */
  admit(
    method: string,
    token: string | undefined,
    args: Record<string, unknown>,
    now: number,
  ): number | undefined {
    const perChannel = method === 'chat.postMessage' && typeof args.channel === 'string';
    const rate = perChannel ? postMessagePerChannel : tiers[method];
    if (!rate) return undefined;
    const key = `${token}:${method}${perChannel ? `:${String(args.channel)}` : ''}`;
    const recent = (this.calls.get(key) ?? []).filter((at) => at > now - rate.windowMs);
    this.calls.set(key, recent);
    const oldest = recent[0];
    if (recent.length >= rate.limit && oldest !== undefined) {
      return Math.max(1, Math.ceil((oldest + rate.windowMs - now) / 1000));
    }
    recent.push(now);
    return undefined;
  }

  reset(): void {
    this.calls.clear();
  }
}
