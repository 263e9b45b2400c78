import { AsyncLocalStorage } from 'node:async_hooks';
import { type Client, type ElicitResult, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { InputRequest, InputResponse } from '../../contracts/input-needed.js';
import { toInputRequests } from './input-requests.js';

/**
 * How a call's questions reach the person who asked for it: `ask` resolves with their answer, or with `cancel`
 * once `signal` aborts (the server stopped waiting, or the call ended). `person` names them: the calls of one
 * person may share a session's questions that name no call.
 */
export interface Asker {
  person: string;
  ask(request: InputRequest, signal: AbortSignal): Promise<InputResponse>;
}

/** The longest timer Node keeps (about 24.8 days): the SDK's own request timeout, out of the way. */
const noSdkTimeout = 2_147_483_647;

/** A call's deadline that stops while a person answers the server's question, and goes on with what was left. */
class PausableDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  private pauses = 0;
  private cleared = false;

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
    this.cleared = true;
    clearTimeout(this.timer);
  }

  private start(): void {
    if (this.cleared) return;
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
  asker: Asker | undefined;
  deadline: PausableDeadline;
  /** Aborted when the call ends: a question still open for it then is moot. */
  ended: AbortController;
}

/**
 * The questions a 2025 server pushes over its session in the middle of a call (`elicitation/create`), asked of
 * the person who asked for that call. The request names no call, so it is matched to the one whose response
 * stream it came on (Streamable HTTP sends it there: the stream is read in that call's async context); else to
 * the one call open on the session, but only when no other person's call may still run there (one that ended
 * without the server's answer, timed out or cancelled, may run on and ask): a question must never reach someone
 * it was not meant for. A question no call can be found for is declined. The call's deadline stops while its
 * person answers: the wait is theirs (bounded by the question's own expiry).
 */
export class SessionQuestions {
  private readonly open = new Set<OpenCall>();
  private readonly current = new AsyncLocalStorage<OpenCall>();
  /** Whose calls ended here without the server's answer (the server may still be running them). */
  private readonly unfinished = new Set<string | undefined>();

  constructor(private readonly onDeclined: (why: string) => void) {}

  /** Answers the session's questions on `client`. */
  listen(client: Client): void {
    client.setRequestHandler('elicitation/create', (request, context) =>
      this.answer(request.params, context.mcpReq.signal),
    );
  }

  /**
   * Runs one call with its deadline (`timeoutMs`, paused while a person answers) and `signal`; `asker` is how its
   * questions reach its person (none: they are declined). `call` gets the SDK's timeout to pass, out of the way.
   */
  async run<T>(
    options: { timeoutMs: number; signal: AbortSignal; asker?: Asker | undefined },
    call: (signal: AbortSignal, sdkTimeoutMs: number) => Promise<T>,
  ): Promise<T> {
    const open = {
      asker: options.asker,
      deadline: new PausableDeadline(options.timeoutMs),
      ended: new AbortController(),
    };
    this.open.add(open);
    const signal = AbortSignal.any([options.signal, open.deadline.signal]);
    try {
      return await this.current.run(open, () => call(signal, noSdkTimeout));
    } finally {
      if (signal.aborted) this.unfinished.add(options.asker?.person);
      open.deadline.clear();
      open.ended.abort();
      this.open.delete(open);
    }
  }

  private async answer(params: unknown, serverGaveUp: AbortSignal): Promise<ElicitResult> {
    const open = this.callOf();
    if (!open) return { action: 'decline' };
    const asked = toInputRequests({ question: { method: 'elicitation/create', params } });
    const [request] = 'requests' in asked ? asked.requests : [];
    if (!open.asker || !request) {
      this.onDeclined(
        !open.asker
          ? 'the call has nobody to ask (a sub-agent’s)'
          : 'unsupported' in asked
            ? asked.unsupported
            : '',
      );
      return { action: 'decline' };
    }
    open.deadline.pause();
    try {
      const { action, content } = await open.asker.ask(
        request,
        AbortSignal.any([serverGaveUp, open.ended.signal]),
      );
      return content ? { action, content } : { action };
    } catch (error) {
      this.onDeclined(
        `asking failed, so the call was told cancel: ${error instanceof Error ? error.message : String(error)}`,
      );
      return { action: 'cancel' };
    } finally {
      open.deadline.resume();
    }
  }

  /** The call a question is for, or undefined (said why) when it cannot be told safely. */
  private callOf(): OpenCall | undefined {
    const streamed = this.current.getStore();
    if (streamed) {
      if (this.open.has(streamed)) return streamed;
      this.onDeclined('it came for a call that had ended');
      return undefined;
    }
    const [only, ...others] = this.open;
    const person = only?.asker?.person;
    if (!only || others.length > 0) {
      this.onDeclined(`it named no call, and ${this.open.size} were open`);
      return undefined;
    }
    if ([...this.unfinished].some((other) => other !== person || other === undefined)) {
      this.onDeclined('it named no call, and another person’s cancelled call may still run');
      return undefined;
    }
    return only;
  }
}
