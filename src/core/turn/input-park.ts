import type { ChatAdapter, ReplyTarget } from '../contracts/adapter.js';
import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { InputFormRequest } from '../contracts/input-form.js';
import type { InputRequest, InputResponse } from '../contracts/input-needed.js';
import type { InputWaitRecord, ParkedInputWait } from '../contracts/input-waits.js';
import type { Logger } from '../contracts/logger.js';
import type { ConversationMessage } from '../contracts/messages.js';
import type { ResumeState } from '../contracts/store.js';
import { answerAudit, enqueueInputContinuation, sortQuestions } from '../inputs/index.js';
import { type Resolution, type ToolResult, type ToolScope, waitingApprovals } from '../tool-calls/index.js';
import { resumeAgents } from './delegation.js';
import { adapterFor, type Turn, type TurnRunnerDeps } from './turn.js';
import { commitTurnWith, deliverReply, resumeStateOf } from './turn-endings.js';

/**
 * Parks a turn on a server's question (MCP elicitation, 2026-07-28 `input_required`), as for a connection: the
 * call, the questions and the server's `requestState` are stored, the person who asked is shown a form where
 * only they can answer it, and the turn goes on in any process once they have answered, or once the wait ends
 * (the call is then told they cancelled). What Butler must not ask (secrets) it declines itself, with a note.
 */

type NeedsInput = Extract<Resolution, { status: 'needs_input' }>;

export const quoted = (message: string) => (message.trim() ? `"${message.trim()}"` : 'for input');

export function askedLine(server: string, who: string, request: InputFormRequest): string {
  if (request.mode === 'url')
    return `${server} asks ${who} to open a page on ${request.host}: ${quoted(request.message)}.`;
  return `${server} asks ${who} ${quoted(request.message)}.`;
}

export async function parkForInput(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
  assistant: ResumeState['assistant'],
  resolution: NeedsInput,
) {
  const { store, options } = deps;
  const { need } = resolution;
  const platform = turn.target.address.platform;
  const sorted = sortQuestions(need.server, need.requests);
  const answers: Record<string, InputResponse> = { ...sorted.declined };
  const notes: Record<string, string> = { ...sorted.notes };
  const canShow = turn.adapter.postInputForm !== undefined;
  if (!canShow)
    for (const request of sorted.shown) {
      answers[request.key] = { action: 'decline' };
      notes[request.key] =
        `${need.server} asked ${quoted(request.message)}, and Butler cannot show forms on ${platform} yet, so it declined.`;
    }
  const shown = canShow ? sorted.shown : [];
  const who = turn.requester.name ?? 'the person who asked';
  const lead = turn.reply.shown.trim() ? '\n\n' : '';
  const lines = [
    ...shown.map((request) => askedLine(need.server, who, request)),
    ...Object.values(notes),
    ...(shown.length > 0 ? ['I will go on once it is answered.'] : []),
  ];
  await turn.reply.append(`${lead}${lines.join(' ')}`);
  await deliverReply(deps, turn);
  const { agents, approved } = resolution;
  const resume = {
    ...(await resumeStateOf(turn, assistant, resolution.results, agents)),
    ...(approved.length > 0 ? { approved } : {}),
  };
  const wait = await store.transaction(async (tx) => {
    const created = await tx.inputWaits.create({
      conversationKey: turn.conversation.key,
      platform,
      server: need.server,
      toolName: need.toolName,
      toolCallId: need.callId,
      requests: [...need.requests],
      requestState: need.requestState ?? null,
      requestedBy: turn.requester,
      requesters: [...turn.requesters],
      resume,
      liveUntil: null,
      answers,
      expiresAt: new Date(Date.now() + options.approvalTtlMs),
    });
    for (const [key, response] of Object.entries(answers))
      await tx.audit.record(answerAudit(created, key, response, butler.id, notes[key]));
    await commitTurnWith(deps, tx, turn, pending, 'done');
    // Nothing left to ask: the call goes on at once with what Butler answered itself.
    if (created.status === 'answered') await enqueueInputContinuation(tx, created);
    return created;
  });
  turn.log.info(
    { server: need.server, inputId: wait.id, asked: shown.length, declined: Object.keys(answers).length },
    'turn parked on a question',
  );
  turn.observer.inputAsked?.({
    inputId: wait.id,
    conversationKey: wait.conversationKey,
    server: need.server,
    tool: need.toolName,
    questions: need.requests.map((request) => ({ key: request.key, mode: request.mode })),
  });
  turn.session.ended('parked');
  turn.observer.end({ status: 'parked' });
  if (shown.length > 0) await showForm(deps, turn.adapter, turn.target, wait, shown, turn.log);
}

/**
 * Posts a wait's form and records where it is; a form that cannot be shown is declined at once (nobody could
 * answer it), audited, and the person is told.
 */
export async function showForm(
  deps: TurnRunnerDeps,
  adapter: ChatAdapter,
  target: ReplyTarget,
  wait: InputWaitRecord,
  shown: readonly InputFormRequest[],
  log: Logger,
) {
  const { store } = deps;
  const form = {
    inputId: wait.id,
    server: wait.server,
    tool: wait.toolName,
    requester: wait.requestedBy,
    requests: [...shown],
    expiresAt: wait.expiresAt,
  };
  try {
    if (!adapter.postInputForm) throw new Error(`${adapter.platform} shows no forms`);
    await store.inputWaits.setFormMessage(wait.id, await adapter.postInputForm(target, form));
    return;
  } catch (error) {
    log.warn({ err: error, inputId: wait.id }, 'could not show the form: declined');
  }
  await store.transaction(async (tx) => {
    for (const request of shown) {
      const declined = { action: 'decline' as const };
      const taken = await tx.inputWaits.answer(wait.id, request.key, declined, butler, new Date());
      if (taken.status === 'refused') continue;
      await tx.audit.record(
        answerAudit(taken.wait, request.key, declined, butler.id, 'the form could not be shown'),
      );
      if (taken.status === 'answered') await enqueueInputContinuation(tx, taken.wait);
    }
  });
  await adapter
    .postNotice(target, 'I could not show that question here, so I declined it.')
    .catch((error: unknown) =>
      log.warn({ err: error, inputId: wait.id }, 'could not say the form was declined'),
    );
}

/** Posts the forms that a crash kept from being shown (a wait is stored before its form is posted). */
export async function postMissingForms(deps: TurnRunnerDeps, olderThan: Date): Promise<void> {
  for (const wait of await deps.store.inputWaits.unshown(olderThan)) {
    const address = decodeConversationKey(wait.conversationKey);
    // Another process serving that platform posts it (the same sweep runs there).
    if (!deps.adapters.has(address.platform)) continue;
    const open = wait.requests.filter((request) => !Object.hasOwn(wait.answers, request.key));
    const target = {
      address,
      ...(wait.resume?.replyTo ? { replyTo: wait.resume.replyTo } : {}),
      userId: wait.requestedBy.id,
    };
    const { shown } = sortQuestions(wait.server, open);
    await showForm(deps, adapterFor(deps, address.platform), target, wait, shown, deps.logger);
  }
}

/**
 * Reminds the requesters of questions still open since before `before`, once, in a direct message with the form
 * again (as approval reminders do): on platforms without direct messages the question stays where it was asked.
 */
export async function remindInputs(deps: TurnRunnerDeps, before: Date): Promise<void> {
  const waits = await deps.store.inputWaits.claimReminders(before, [...deps.adapters.keys()]);
  for (const wait of waits) {
    const address = decodeConversationKey(wait.conversationKey);
    const adapter = adapterFor(deps, address.platform);
    const log = deps.logger.child({ inputId: wait.id });
    if (!adapter.openDirectConversation || !adapter.postInputForm) continue;
    const open = wait.requests.filter((request) => !Object.hasOwn(wait.answers, request.key));
    const { shown } = sortQuestions(wait.server, open);
    const until = wait.expiresAt.toISOString().slice(11, 16);
    const note = `${wait.server} still waits for your answer, until ${until} UTC.`;
    try {
      const direct = await adapter.openDirectConversation(wait.requestedBy, address.workspace, note);
      await adapter.postInputForm(
        { address: direct, userId: wait.requestedBy.id },
        {
          inputId: wait.id,
          server: wait.server,
          tool: wait.toolName,
          requester: wait.requestedBy,
          requests: shown,
          expiresAt: wait.expiresAt,
        },
      );
      log.info('the requester was reminded of a question');
    } catch (error) {
      log.warn({ err: error }, 'could not remind the requester of a question');
    }
  }
}

/** Who answered what Butler declined itself. */
export const butler = { id: 'butler', name: 'Butler' };

/** The answers a question's call is made again with: the person's, and `cancel` for any left unanswered. */
function answersOf(wait: InputWaitRecord): Record<string, InputResponse> {
  const responses: Record<string, InputResponse> = {};
  for (const request of wait.requests as InputRequest[])
    responses[request.key] = wait.answers[request.key] ?? { action: 'cancel' };
  return responses;
}

/** What a wait on a question leaves its continuation: the call that asked is made again with the answers. */
export async function inputContinued(
  turn: Turn,
  scope: ToolScope,
  deps: TurnRunnerDeps,
  wait: ParkedInputWait,
) {
  const { resume } = wait;
  // A process that has not seen the server's tools yet waits for them (right after a restart).
  await turn.profile.tools.settled();
  const approvals = await waitingApprovals(deps.store, resume.approved ?? []);
  const decided: ToolResult[] = [];
  const parked = await resumeAgents(turn, scope, resume.agents ?? [], [], decided);
  const answer = {
    responses: answersOf(wait),
    ...(wait.requestState === null ? {} : { requestState: wait.requestState }),
  };
  return { decided, parked, approvals, answers: new Map([[wait.toolCallId, answer]]) };
}
