import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { DecisionResult } from '../../core/contracts/approval-card.js';
import type { ChatUser, Decision } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import {
  type DecisionTarget,
  rejectReasonBlockId,
  renderApprovalCard,
  renderRejectReasonView,
} from './approval-blocks.js';
import { renderArgumentsView } from './arguments-view.js';
import {
  type CardClick,
  parseCardClick,
  parseRejectSubmission,
  parseShowArgumentsClick,
  type ShowArgumentsClick,
} from './interactions.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { type BotIdentity, normalizeMessageEvent } from './normalize.js';
import { isRecord } from './parse.js';
import { sessionStopOf } from './session-stop.js';
import { errorFields, type SlackApi } from './slack-api.js';

export interface InboundDependencies {
  intake: ButlerIntake;
  api: SlackApi;
  logger: Logger;
  identity: () => BotIdentity | undefined;
  answerBots: boolean;
  /**
   * Slack shows the clicker an error after 3 s: a decision still being stored by then is acknowledged anyway.
   * Keep it above the database's statement timeout and below the HTTP server's route deadline.
   */
  acknowledgeWithinMs: number;
  /** A stop pressed where nothing runs: the thread's session is moved out of `processing` all the same. */
  stoppedIdle?: (thread: { channel: string; threadTs: string }) => Promise<void>;
}

/** Bolt's `ack`; a modal submission may answer with errors that keep the modal open. */
type Ack = (response?: { response_action: 'errors'; errors: Record<string, string> }) => Promise<void>;

/** A decision to hand to the core (on one call, or on every pending call of a card), and where its card lives. */
type Decided = DecisionTarget & {
  decision: Decision;
  user: ChatUser;
  reason?: string | undefined;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
};

/** Just what is being decided: the core's input and the log fields take it as it is. */
function targetOf(click: DecisionTarget): DecisionTarget {
  return click.batchId !== undefined ? { batchId: click.batchId } : { approvalId: click.approvalId };
}

/** What storing a decision came to: the core's answer, or a failure to reach it. */
type Recorded = { ok: true; result: DecisionResult } | { ok: false };

const couldNotRecord = 'Butler could not record that decision. Please try again in a moment.';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Bolt listeners' bodies. Message events resolve once the core has the message (the receiver
 * acknowledges then). Clicks are acknowledged only after the decision is stored: Slack never
 * redelivers an acknowledged interaction, so a decision acknowledged first could be lost to a crash.
 */
export function createInboundHandlers(dependencies: InboundDependencies) {
  const { intake, api, logger } = dependencies;

  async function message(body: unknown, event: unknown): Promise<void> {
    const identity = dependencies.identity();
    if (!identity) throw new Error('Slack adapter received an event before auth.test completed');
    const result = normalizeMessageEvent(body, event, { identity, answerBots: dependencies.answerBots });
    if (result.kind === 'ignored') {
      const eventId = isRecord(body) && typeof body.event_id === 'string' ? body.event_id : undefined;
      logger.debug({ platform: 'slack', eventId, reason: result.reason }, 'Slack event ignored');
      return;
    }
    const inbound = result.message;
    const fields = { platform: 'slack', channel: inbound.address.channel, eventId: inbound.eventId };
    if (result.requiresKnownConversation && !(await intake.isKnownConversation(inbound.address))) {
      logger.debug({ ...fields, reason: 'thread_without_butler' }, 'Slack event ignored');
      return;
    }
    const accepted = await intake.accept(inbound);
    logger.info({ ...fields, status: accepted.status }, 'Slack message received');
  }

  async function tell(click: Decided | ShowArgumentsClick, text: string): Promise<void> {
    if (!click.channel) return;
    await api
      .postEphemeral({
        channel: click.channel,
        user: click.user.id,
        text: escapeMrkdwn(text),
        ...(click.threadTs ? { threadTs: click.threadTs } : {}),
      })
      .catch((error: unknown) => {
        logger.warn({ platform: 'slack', ...targetOf(click), ...errorFields(error) }, 'ephemeral failed');
      });
  }

  const clickFields = (click: Decided) => ({
    platform: 'slack',
    ...targetOf(click),
    channel: click.channel,
    user: click.user.id,
  });

  /** Stores the decision (one short transaction in the core); never throws. */
  async function record(click: Decided): Promise<Recorded> {
    try {
      const result = await intake.decide({
        ...targetOf(click),
        platform: 'slack',
        user: click.user,
        decision: click.decision,
        // The click decides only the card it is on; without a message to compare, nothing.
        cardMessageId: click.messageTs ?? '',
        ...(click.reason ? { reason: click.reason } : {}),
      });
      logger.info(
        {
          ...clickFields(click),
          decision: click.decision,
          ok: result.ok,
          code: result.ok ? undefined : result.code,
        },
        'approval click',
      );
      return { ok: true, result };
    } catch (error) {
      logger.error({ ...clickFields(click), ...errorFields(error) }, 'approval decision failed');
      return { ok: false };
    }
  }

  /** Waits for the decision to be stored, but not past the acknowledgement deadline. */
  async function recordWithinDeadline(
    click: Decided,
  ): Promise<{ recording: Promise<Recorded>; inTime: boolean }> {
    const recording = record(click);
    const inTime = await Promise.race([
      recording.then(() => true),
      sleep(dependencies.acknowledgeWithinMs).then(() => false),
    ]);
    if (!inTime)
      logger.warn(clickFields(click), 'approval decision is slow; acknowledging before Slack gives up');
    return { recording, inTime };
  }

  /** After the acknowledgement: tell the clicker what happened and show the card's real state. */
  async function report(click: Decided, recorded: Recorded): Promise<void> {
    if (!recorded.ok) return tell(click, couldNotRecord);
    const { result } = recorded;
    // A failure always says why; a success may too ("Approve all" that could not decide every call).
    if (result.message) await tell(click, result.message);
    // An unauthorised click leaves the card as it is; otherwise show the card's real state.
    const card = result.ok ? result.card : result.code === 'not_authorized' ? undefined : result.card;
    if (!card || !click.channel || !click.messageTs) return;
    await api
      .updateMessage({ channel: click.channel, ts: click.messageTs, ...renderApprovalCard(card) })
      .catch((error: unknown) =>
        logger.warn({ ...clickFields(click), ...errorFields(error) }, 'could not update the approval card'),
      );
  }

  async function decideThenAcknowledge(click: Decided, ack: Ack): Promise<void> {
    const { recording } = await recordWithinDeadline(click);
    await ack();
    await report(click, await recording);
  }

  /** Opens the reject-reason modal; false when it cannot be opened (the rejection then has no reason). */
  async function askForReason(click: CardClick): Promise<boolean> {
    if (!click.triggerId || !click.channel || !click.messageTs) return false;
    const view = renderRejectReasonView({
      ...targetOf(click),
      channel: click.channel,
      messageTs: click.messageTs,
      ...(click.threadTs ? { threadTs: click.threadTs } : {}),
    });
    if (!view) return false;
    try {
      await api.openView({ triggerId: click.triggerId, view });
      return true;
    } catch (error) {
      logger.info(
        { platform: 'slack', ...targetOf(click), ...errorFields(error) },
        'reject reason modal unavailable; rejecting without a reason',
      );
      return false;
    }
  }

  async function cardClick(body: unknown, ack: Ack): Promise<void> {
    const click = parseCardClick(body);
    if (!click) {
      await ack();
      logger.warn({ platform: 'slack' }, 'approval click without an approval id or user');
      return;
    }
    // Nothing is decided yet when the modal opens: it asks for a reason first (its trigger is good for 3 s).
    if (click.decision === 'reject' && (await askForReason(click))) {
      await ack();
      return;
    }
    await decideThenAcknowledge({ ...click, reason: undefined }, ack);
  }

  async function rejectSubmission(body: unknown, ack: Ack): Promise<void> {
    const submission = parseRejectSubmission(body);
    if (!submission) {
      await ack();
      logger.warn({ platform: 'slack' }, 'reject reason submission without its approval context');
      return;
    }
    const { context } = submission;
    const click: Decided = {
      ...targetOf(context),
      decision: 'reject',
      user: submission.user,
      reason: submission.reason,
      channel: context.channel,
      messageTs: context.messageTs,
      threadTs: context.threadTs,
    };
    const { recording, inTime } = await recordWithinDeadline(click);
    const recorded = inTime ? await recording : undefined;
    if (recorded && !recorded.ok) {
      // The modal stays open with the reason typed in, so the person can submit again.
      await ack({ response_action: 'errors', errors: { [rejectReasonBlockId]: couldNotRecord } });
      return;
    }
    await ack();
    await report(click, recorded ?? (await recording));
  }

  /**
   * "Show all arguments": the request's calls read from the database, whole, in a modal. Nothing is stored,
   * so the click is acknowledged first; the trigger stays good for 3 s (platforms.md §3).
   */
  async function showArguments(body: unknown, ack: Ack): Promise<void> {
    await ack();
    const click = parseShowArgumentsClick(body);
    if (!click?.triggerId) {
      logger.warn({ platform: 'slack' }, 'show-arguments click without a request, user or trigger');
      return;
    }
    const fields = { platform: 'slack', ...targetOf(click), user: click.user.id };
    try {
      const details = await intake.approvalDetails({
        ...targetOf(click),
        platform: 'slack',
        // Only the card the button is on; without a message to compare, nothing.
        cardMessageId: click.messageTs ?? '',
      });
      if (!details) return await tell(click, 'This approval request no longer exists.');
      await api.openView({ triggerId: click.triggerId, view: renderArgumentsView(details) });
      logger.info({ ...fields, calls: details.calls.length }, 'arguments shown');
    } catch (error) {
      logger.warn({ ...fields, ...errorFields(error) }, 'could not show the arguments');
      await tell(click, 'Butler could not open the arguments. Please try again.');
    }
  }

  /** Slack's stop button on an agent session: stop the turn answering in that thread. */
  async function sessionStopped(body: unknown, event: unknown): Promise<void> {
    const stop = sessionStopOf(body, event);
    if (!stop) return;
    // The reply says who stopped it: by name where Slack tells it.
    const { name } = await api.userProfile(stop.userId).catch(() => ({ name: undefined }));
    const user = name ? { id: stop.userId, name } : { id: stop.userId };
    const status = await intake.stop({ address: stop.address, user, isDirect: stop.isDirect });
    logger.info(
      { platform: 'slack', channel: stop.address.channel, user: stop.userId, status },
      'agent session stopped',
    );
    // Nothing runs here (the turn ended, or Butler restarted since the session showed `processing`): Slack
    // leaves the status to the app, so it moves out of `processing` now. A running turn's end does it otherwise.
    const thread = { channel: stop.address.channel, threadTs: stop.address.thread };
    if (status === 'idle') await dependencies.stoppedIdle?.(thread);
  }

  return { message, cardClick, rejectSubmission, showArguments, sessionStopped };
}

export type InboundHandlers = ReturnType<typeof createInboundHandlers>;
