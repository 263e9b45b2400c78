import { onPlatform } from '../contracts/events.js';
import type { InputAnswerInput, InputAnswerResult, InputQuestionResult } from '../contracts/input-form.js';
import type { InputResponse } from '../contracts/input-needed.js';
import { type InputWaitRecord, isParked, type NewInputWait } from '../contracts/input-waits.js';
import type { Logger } from '../contracts/logger.js';
import { noopObserver, type Observer } from '../contracts/observer.js';
import type { People } from '../contracts/people.js';
import type { AuditEntry } from '../contracts/repositories.js';
import type { Store } from '../contracts/store.js';
import { checkAnswer, formOf } from '../forms/index.js';
import type { LiveQuestions } from './live-questions.js';
import { sortQuestions } from './questions.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const refusals = {
  missing: 'There is no such question here.',
  closed: 'This question is closed: it was answered, or its time ran out.',
  answered_already: 'This was answered already; nothing changed.',
} as const;

const refused = <Reason extends keyof typeof refusals>(reason: Reason) =>
  ({ ok: false, reason, message: refusals[reason] }) as const;

/**
 * The audit row of an answer to a server's question: who, which question, the action and which fields were
 * filled in; never what they hold.
 */
export function answerAudit(
  wait: Pick<NewInputWait, 'conversationKey' | 'server' | 'toolName' | 'toolCallId' | 'requesters'>,
  key: string,
  response: InputResponse,
  by: string,
  why?: string,
) {
  return {
    conversationKey: wait.conversationKey,
    approvalId: null,
    toolName: wait.toolName,
    toolCallId: wait.toolCallId,
    arguments: {
      server: wait.server,
      question: key,
      action: response.action,
      fields: Object.keys(response.content ?? {}),
      ...(why ? { why } : {}),
    },
    risk: 'unknown',
    decision: 'answered',
    outcome: 'not_run',
    actor: by,
    requesters: wait.requesters.map((requester) => requester.id),
    decidedBy: by,
    error: null,
    durationMs: 0,
  } satisfies AuditEntry;
}

/**
 * The inbox work that continues a turn parked on a question, once per wait (its id is the deduplication key). A
 * live question has none: its call still waits in the process that made it, which reads the answer itself.
 */
export async function enqueueInputContinuation(
  store: Store,
  wait: InputWaitRecord,
): Promise<number | undefined> {
  if (!isParked(wait)) return undefined;
  return store.inbox.insert({
    platform: wait.platform,
    dedupKey: `input-wait:${wait.id}`,
    conversationKey: wait.conversationKey,
    userId: wait.requestedBy.id,
    payload: { kind: 'input', waitId: wait.id },
  });
}

/**
 * Answers to what servers asked mid-call, from any channel: only the person who asked for the call answers
 * (as a person, whichever of their identities on the question's platform), each question once, checked against
 * its form on the server whatever the client showed; the last answer sends the turn on, in any process.
 */
export class InputService {
  constructor(
    private readonly store: Store,
    private readonly people: People,
    private readonly logger: Logger,
    private readonly observer: Observer = noopObserver,
    /** This process's calls waiting for an answer over a live session: woken when theirs is stored here. */
    private readonly live?: LiveQuestions,
  ) {}

  /** The wait and its request that `input` is about, when its user may answer it; else why not. */
  private async find(input: Pick<InputAnswerInput, 'user' | 'inputId' | 'key'>) {
    const wait = uuidPattern.test(input.inputId) ? await this.store.inputWaits.get(input.inputId) : undefined;
    if (!wait || wait.platform !== input.user.platform) return refused('missing');
    if (!this.people.same(input.user, onPlatform(wait.requestedBy, wait.platform))) {
      const name = wait.requestedBy.name ?? 'the person who asked';
      return {
        ok: false,
        reason: 'not_yours',
        message: `Only ${name} can answer this: they asked for it.`,
      } as const;
    }
    const [only] = wait.requests;
    const key = input.key ?? (wait.requests.length === 1 ? only?.key : undefined);
    const request = wait.requests.find((each) => each.key === key);
    if (!request) return refused('missing');
    return { ok: true, wait, request } as const;
  }

  async question(input: Pick<InputAnswerInput, 'user' | 'inputId' | 'key'>): Promise<InputQuestionResult> {
    const found = await this.find(input);
    if (!found.ok) return found;
    const { wait, request } = found;
    if (wait.status !== 'waiting' || wait.expiresAt <= new Date() || Object.hasOwn(wait.answers, request.key))
      return refused('closed');
    const [shown] = sortQuestions(wait.server, [request]).shown;
    if (!shown) return refused('closed');
    return { ok: true, server: wait.server, request: shown };
  }

  async answer(input: InputAnswerInput): Promise<InputAnswerResult> {
    const found = await this.find(input);
    if (!found.ok) return found;
    const { wait, request } = found;
    const { key } = request;
    let response: InputResponse = { action: input.action };
    if (input.action === 'accept' && request.mode === 'form') {
      const form = formOf(request.requestedSchema);
      if ('unsupported' in form) return refused('closed');
      const checked = checkAnswer(form.fields, input.content ?? {});
      if ('errors' in checked)
        return { ok: false, reason: 'invalid', message: 'Some answers need a fix.', errors: checked.errors };
      response = { action: 'accept', content: checked.content };
    }
    const outcome = await this.store.transaction(async (tx) => {
      const taken = await tx.inputWaits.answer(wait.id, key, response, input.user, new Date());
      if (taken.status === 'refused') return taken;
      await tx.audit.record(answerAudit(wait, key, response, input.user.id));
      if (taken.status === 'answered') await enqueueInputContinuation(tx, taken.wait);
      return taken;
    });
    if (outcome.status === 'refused') return refused(outcome.reason);
    if (outcome.status === 'answered') this.live?.answered(wait.id);
    this.observer.inputAnswered?.({
      inputId: wait.id,
      conversationKey: wait.conversationKey,
      server: wait.server,
      tool: wait.toolName,
      key,
      action: response.action,
      fields: Object.keys(response.content ?? {}),
      answeredBy: input.user.id,
    });
    this.logger.info(
      {
        inputId: wait.id,
        server: wait.server,
        key,
        action: response.action,
        // Which fields were filled, never what they hold.
        fields: Object.keys(response.content ?? {}),
      },
      'a question was answered',
    );
    return { ok: true, status: outcome.status, server: wait.server };
  }

  /** Ends the questions nobody answered in time: each call goes on, told the person cancelled. */
  async expireDue(now = new Date()): Promise<number> {
    return this.store.transaction(async (tx) => {
      const expired = await tx.inputWaits.expireDue(now);
      for (const wait of expired) await enqueueInputContinuation(tx, wait);
      return expired.length;
    });
  }
}
