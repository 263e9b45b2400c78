import { AsyncLocalStorage } from 'node:async_hooks';
import { type Client, type ElicitResult, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { InputRequest, InputResponse } from '../../contracts/input-needed.js';
import { toInputRequests } from './input-requests.js';

/** Asks the person who asked for a call what its server asks mid-call, and resolves with their answer. */
export type AskPerson = (request: InputRequest) => Promise<InputResponse>;

/** The longest timer Node keeps (about 24.8 days): the SDK's own request timeout, out of the way. */
const noSdkTimeout = 2_147_483_647;

/** A call's deadline that stops while a person answers the server's question, and goes on with what was left. */
class PausableDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  private pauses = 0;

  constructor(private readonly timeoutMs: number) {
    this.left = timeoutMs;
    this.start();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  pause(): void {
    if (this.pauses++ > 0) return;
    clearTimeout(this.timer);
    this.left -= Date.now() - this.since;
  }

  resume(): void {
    if (--this.pauses === 0) this.start();
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  private start(): void {
    this.since = Date.now();
    // The SDK's own timeout error, so a deadline that passes reads as one that the SDK saw pass.
    const timedOut = () =>
      this.controller.abort(
        new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: this.timeoutMs }),
      );
    this.timer = setTimeout(timedOut, Math.max(0, this.left));
  }
}

interface OpenCall {
  ask: AskPerson | undefined;
  deadline: PausableDeadline;
}

/**
 * The questions a 2025 server pushes over its session in the middle of a call (`elicitation/create`), asked of
 * the person who asked for that call. The request names no call, so it is matched to the one whose response
 * stream it came on (Streamable HTTP sends it there: the stream is read in that call's async context); else, when
 * exactly one call is open on the session, to that one. A question no call can be found for is declined. The
 * call's deadline stops while its person answers: the wait is theirs (bounded by the question's own expiry).
 */
export class SessionQuestions {
  private readonly open = new Set<OpenCall>();
  private readonly current = new AsyncLocalStorage<OpenCall>();

  constructor(private readonly onUnmatched: (why: string) => void) {}

  /** Answers the session's questions on `client`. */
  listen(client: Client): void {
    client.setRequestHandler('elicitation/create', (request) => this.answer(request.params));
  }

  /**
   * Runs one call with its deadline (`timeoutMs`, paused while a person answers) and `signal`; `ask` is how its
   * questions reach its person (none: they are declined). `call` gets the SDK's timeout to pass, out of the way.
   */
  async run<T>(
    options: { timeoutMs: number; signal: AbortSignal; ask?: AskPerson | undefined },
    call: (signal: AbortSignal, sdkTimeoutMs: number) => Promise<T>,
  ): Promise<T> {
    const open = { ask: options.ask, deadline: new PausableDeadline(options.timeoutMs) };
    this.open.add(open);
    try {
      const signal = AbortSignal.any([options.signal, open.deadline.signal]);
      return await this.current.run(open, () => call(signal, noSdkTimeout));
    } finally {
      open.deadline.clear();
      this.open.delete(open);
    }
  }

  private async answer(params: unknown): Promise<ElicitResult> {
    const [only] = this.open;
    const open = this.current.getStore() ?? (this.open.size === 1 ? only : undefined);
    if (!open) {
      this.onUnmatched(`${this.open.size} calls were open: the question could not be told apart`);
      return { action: 'decline' };
    }
    const asked = toInputRequests({ question: { method: 'elicitation/create', params } });
    if (!open.ask || 'unsupported' in asked || !asked.requests[0]) return { action: 'decline' };
    open.deadline.pause();
    try {
      const { action, content } = await open.ask(asked.requests[0]);
      return content ? { action, content } : { action };
    } finally {
      open.deadline.resume();
    }
  }
}
