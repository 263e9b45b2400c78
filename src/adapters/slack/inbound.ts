import type { ButlerIntake } from '../../core/adapter.js';
import type { ChatUser, Decision } from '../../core/events.js';
import type { Logger } from '../../core/logger.js';
import { renderApprovalCard, renderRejectReasonView } from './approval-blocks.js';
import { parseCardClick, parseRejectSubmission } from './interactions.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { type BotIdentity, normalizeMessageEvent } from './normalize.js';
import { isRecord } from './parse.js';
import { errorFields, type SlackApi } from './slack-api.js';

export interface InboundDependencies {
  intake: ButlerIntake;
  api: SlackApi;
  logger: Logger;
  identity: () => BotIdentity | undefined;
  answerBots: boolean;
}

type Ack = () => Promise<void>;

/** A decision to hand to the core, and where its card lives. */
interface Decided {
  approvalId: string;
  decision: Decision;
  user: ChatUser;
  reason?: string | undefined;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
}

/**
 * Bolt listeners' bodies. Message events resolve once the core has the message (the receiver
 * acknowledges then); clicks acknowledge first and then take the decision.
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

  async function tell(click: Decided, text: string): Promise<void> {
    if (!click.channel) return;
    await api
      .postEphemeral({
        channel: click.channel,
        user: click.user.id,
        text: escapeMrkdwn(text),
        ...(click.threadTs ? { threadTs: click.threadTs } : {}),
      })
      .catch((error: unknown) => {
        logger.warn(
          { platform: 'slack', approvalId: click.approvalId, ...errorFields(error) },
          'ephemeral failed',
        );
      });
  }

  async function decide(click: Decided): Promise<void> {
    const fields = {
      platform: 'slack',
      approvalId: click.approvalId,
      channel: click.channel,
      user: click.user.id,
    };
    let result: Awaited<ReturnType<ButlerIntake['decide']>>;
    try {
      result = await intake.decide({
        approvalId: click.approvalId,
        platform: 'slack',
        user: click.user,
        decision: click.decision,
        ...(click.reason ? { reason: click.reason } : {}),
      });
    } catch (error) {
      logger.error({ ...fields, ...errorFields(error) }, 'approval decision failed');
      await tell(click, 'Butler could not record that decision. Please try again in a moment.');
      return;
    }
    logger.info(
      { ...fields, decision: click.decision, ok: result.ok, code: result.ok ? undefined : result.code },
      'approval click',
    );
    if (!result.ok) await tell(click, result.message);
    // An unauthorised click leaves the card as it is; otherwise show the card's real state.
    const card = result.ok ? result.card : result.code === 'not_authorized' ? undefined : result.card;
    if (!card || !click.channel || !click.messageTs) return;
    await api
      .updateMessage({ channel: click.channel, ts: click.messageTs, ...renderApprovalCard(card) })
      .catch((error: unknown) =>
        logger.warn({ ...fields, ...errorFields(error) }, 'could not update the approval card'),
      );
  }

  async function cardClick(body: unknown, ack: Ack): Promise<void> {
    await ack();
    const click = parseCardClick(body);
    if (!click) {
      logger.warn({ platform: 'slack' }, 'approval click without an approval id or user');
      return;
    }
    if (click.decision === 'reject' && click.triggerId && click.channel && click.messageTs) {
      const context = {
        approvalId: click.approvalId,
        channel: click.channel,
        messageTs: click.messageTs,
        ...(click.threadTs ? { threadTs: click.threadTs } : {}),
      };
      try {
        await api.openView({ triggerId: click.triggerId, view: renderRejectReasonView(context) });
        return;
      } catch (error) {
        logger.info(
          { platform: 'slack', approvalId: click.approvalId, ...errorFields(error) },
          'reject reason modal unavailable; rejecting without a reason',
        );
      }
    }
    await decide({ ...click, reason: undefined });
  }

  async function rejectSubmission(body: unknown, ack: Ack): Promise<void> {
    await ack();
    const submission = parseRejectSubmission(body);
    if (!submission) {
      logger.warn({ platform: 'slack' }, 'reject reason submission without its approval context');
      return;
    }
    const { context } = submission;
    await decide({
      approvalId: context.approvalId,
      decision: 'reject',
      user: submission.user,
      reason: submission.reason,
      channel: context.channel,
      messageTs: context.messageTs,
      threadTs: context.threadTs,
    });
  }

  return { message, cardClick, rejectSubmission };
}

export type InboundHandlers = ReturnType<typeof createInboundHandlers>;
