import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { InputRequest, InputResponse } from '../contracts/input-needed.js';
import type { InputWaitRecord } from '../contracts/input-waits.js';
import { answerAudit, type LiveQuestions, sortQuestions } from '../inputs/index.js';
import type { ToolScope } from '../tool-calls/index.js';
import { askedLine, butler, quoted, showForm } from './input-park.js';
import { adapterFor, type Turn, type TurnRunnerDeps } from './turn.js';

/**
 * A question a 2025 server asks over its session while a call runs (MCP `elicitation/create`). The call stays
 * open in this process while the person who asked for it answers, in the same form, with the same checks and
 * audit as a parked question; the answer goes back over the session and the turn goes on from there. The
 * question is stored (`live_until`) so an answer can come through any process; if the call ends first (the turn
 * stopped, Butler restarted) the question lapses, the person is told, and the server's call ends as cancelled.
 */

const restarted = 'Butler restarted before it was answered';
const shutDown = 'Butler shut down before it was answered';
const serverGaveUp = 'the server stopped waiting for it';

type Call = Parameters<NonNullable<ToolScope['ask']>>[0];

/** A line of its own in the reply, between what the model wrote before the call and what it writes after. */
async function say(turn: Turn, line: string): Promise<void> {
  turn.reply.endStep();
  await turn.reply.append(line);
  turn.reply.endStep();
}

/** How the turn's calls ask their person: absent where this process keeps no live questions. */
export function questionAsker(deps: TurnRunnerDeps, turn: Turn): ToolScope['ask'] {
  const { live } = deps;
  return live && ((call, request, signal) => askLive(deps, live, turn, call, request, signal));
}

async function askLive(
  deps: TurnRunnerDeps,
  live: LiveQuestions,
  turn: Turn,
  call: Call,
  request: InputRequest,
  /** Aborts when the server stops waiting for the answer, or the call ends. */
  moot: AbortSignal,
): Promise<InputResponse> {
  const { store } = deps;
  const platform = turn.target.address.platform;
  const about = {
    conversationKey: turn.conversation.key,
    requesters: [...turn.requesters],
    server: call.server,
    toolName: call.toolName,
    toolCallId: call.callId,
  };
  const sorted = sortQuestions(call.server, [request]);
  const [shown] = turn.adapter.postInputForm ? sorted.shown : [];
  if (!shown) {
    // Not to be shown (a secret, a page over plain http), or nowhere to show it: declined, and said so.
    const why =
      sorted.notes[request.key] ??
      `${call.server} asked ${quoted(request.message)}, and Butler cannot show forms on ${platform} yet, so it declined.`;
    const declined = sorted.declined[request.key] ?? { action: 'decline' };
    await store.audit.record(answerAudit(about, request.key, declined, butler.id, why));
    await say(turn, why);
    return declined;
  }
  const wait = await live.open({
    ...about,
    platform,
    requests: [request],
    requestState: null,
    requestedBy: turn.requester,
    answers: {},
    expiresAt: new Date(Date.now() + deps.options.approvalTtlMs),
  });
  turn.log.info({ server: call.server, inputId: wait.id }, 'a call waits for a question to be answered');
  try {
    turn.observer.inputAsked?.({
      inputId: wait.id,
      conversationKey: wait.conversationKey,
      server: call.server,
      tool: call.toolName,
      questions: [{ key: request.key, mode: request.mode }],
    });
    await say(turn, askedLine(call.server, turn.requester.name ?? 'the person who asked', shown));
    await showForm(deps, turn.adapter, turn.target, wait, [shown], turn.log);
    turn.session.waiting(true);
    const settled = await live.settled(wait.id, AbortSignal.any([turn.signal, moot]));
    turn.session.waiting(false);
    // Nobody answered in time: the server hears `cancel`, as for a parked question.
    return settled?.answers[request.key] ?? { action: 'cancel' };
  } catch (error) {
    if (!turn.signal.aborted) turn.session.waiting(false);
    const why = whyLapsed(turn, live, moot);
    await lapsed(deps, await store.inputWaits.lapse(new Date(), { id: wait.id }), why);
    if (turn.signal.aborted) throw error;
    return { action: 'cancel' };
  }
}

/** Why a call stopped waiting for its question's answer before it came. */
function whyLapsed(turn: Turn, live: LiveQuestions, moot: AbortSignal): string {
  if (turn.stop?.stoppedBy) return 'the turn was stopped before it was answered';
  if (live.closed) return shutDown;
  // The worker gave the turn up: the process is going, or lost the turn to another.
  if (turn.signal.aborted) return restarted;
  if (moot.aborted) return serverGaveUp;
  return 'Butler could not wait for it';
}

/** Lapsed questions: audited as cancelled by Butler, and their people told where they were asked. */
async function lapsed(deps: TurnRunnerDeps, waits: readonly InputWaitRecord[], why: string) {
  const cancelled = { action: 'cancel' as const };
  for (const wait of waits) {
    const [request] = wait.requests;
    if (!request) continue;
    await deps.store.audit.record(answerAudit(wait, request.key, cancelled, butler.id, why));
    const address = decodeConversationKey(wait.conversationKey);
    const notice = `${wait.server}'s question lapsed: ${why}, so its call was cancelled.`;
    await adapterFor(deps, address.platform)
      .postNotice({ address, userId: wait.requestedBy.id }, notice)
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, inputId: wait.id }, 'could not tell that a question lapsed'),
      );
  }
}

/** Lapses the live questions no process vouches for any more (theirs died with their calls), once each. */
export async function lapseOrphanQuestions(deps: TurnRunnerDeps): Promise<number> {
  const platforms = [...deps.adapters.keys()];
  const waits = await deps.store.inputWaits.lapse(new Date(), { platforms });
  await lapsed(deps, waits, restarted);
  return waits.length;
}
