import type { ViewErrorsResponseAction } from '@slack/bolt';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { ChatUser } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import {
  contentOf,
  errorsByBlock,
  type InputClick,
  parseInputClick,
  parseInputSubmission,
  renderInputAnswered,
  renderInputModal,
} from './input-form-blocks.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { errorFields, type SlackApi } from './slack-api.js';

export interface InputFormHandlerDependencies {
  intake: ButlerIntake;
  api: SlackApi;
  logger: Logger;
}

type Ack = () => Promise<void>;

/** How long a click waits for its answer to be stored before it is acknowledged anyway (Slack allows 3 s). */
const acknowledgeWithinMs = 2_500;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
type SubmissionAck = (response?: ViewErrorsResponseAction) => Promise<void>;

/**
 * Clicks on a server's question and the modal Fill in opens. The core says who may answer and checks every
 * answer against the stored form: a stranger's click or submission is refused with a note only they see, and a
 * submission with mistakes keeps the modal open with an error under each field.
 */
export function createInputFormHandlers(dependencies: InputFormHandlerDependencies) {
  const { intake, api, logger } = dependencies;
  const slackUser = (user: ChatUser) => ({ ...user, platform: 'slack' as const });

  async function tell(click: Pick<InputClick, 'channel' | 'threadTs'>, user: ChatUser, text: string) {
    await api
      .postEphemeral({
        channel: click.channel,
        user: user.id,
        text: escapeMrkdwn(text),
        ...(click.threadTs ? { threadTs: click.threadTs } : {}),
      })
      .catch((error: unknown) =>
        logger.warn({ platform: 'slack', ...errorFields(error) }, 'input notice failed'),
      );
  }

  async function showAnswered(
    at: Pick<InputClick, 'channel' | 'messageTs' | 'user'>,
    server: string,
    action: string,
  ) {
    await api
      .updateMessage({
        channel: at.channel,
        ts: at.messageTs,
        ...renderInputAnswered(server, at.user, action),
      })
      .catch((error: unknown) =>
        logger.warn({ platform: 'slack', ...errorFields(error) }, 'could not show the answered question'),
      );
  }

  async function inputClick(body: unknown, ack: Ack): Promise<void> {
    const click = parseInputClick(body);
    if (!click) {
      await ack();
      logger.warn({ platform: 'slack' }, 'question click without its question or user');
      return;
    }
    const reference = { user: slackUser(click.user), inputId: click.inputId, key: click.key };
    if (click.action === 'fill') {
      await ack();
      const question = await intake.inputQuestion(reference);
      if (!question.ok) return tell(click, click.user, question.message);
      if (!click.triggerId)
        return tell(click, click.user, 'Slack did not let Butler open the form; try again.');
      // The modal carries no values of its own: it is built from the stored question, for its requester only.
      await api
        .openView({
          triggerId: click.triggerId,
          view: renderInputModal(question.server, click, question.request),
        })
        .catch((error: unknown) =>
          logger.warn({ platform: 'slack', ...errorFields(error) }, 'form modal failed'),
        );
      return;
    }
    // The answer is stored before the click is acknowledged (within Slack's 3 s): an acknowledged click counted.
    const action = click.action === 'open' ? 'accept' : click.action;
    const answering = intake.answerInput({ ...reference, action });
    await Promise.race([answering.catch(() => undefined), sleep(acknowledgeWithinMs)]);
    await ack();
    const result = await answering.catch((error: unknown) => {
      logger.error({ platform: 'slack', ...errorFields(error) }, 'question answer failed');
      return undefined;
    });
    if (!result?.ok)
      return tell(click, click.user, result?.message ?? 'Butler could not record that; try again.');
    await showAnswered(click, result.server, action);
  }

  async function formSubmission(body: unknown, ack: SubmissionAck): Promise<void> {
    const submission = parseInputSubmission(body);
    if (!submission) {
      await ack();
      logger.warn({ platform: 'slack' }, 'form submission without its question or user');
      return;
    }
    const reference = { user: slackUser(submission.user), inputId: submission.inputId, key: submission.key };
    const question = await intake.inputQuestion(reference);
    if (!question.ok || question.request.mode !== 'form') {
      // Closed meanwhile, or not theirs: the modal goes, and a note says why.
      await ack();
      return tell(
        submission,
        submission.user,
        question.ok ? 'This question takes no form.' : question.message,
      );
    }
    const { fields } = question.request;
    const content = contentOf(fields, submission.values);
    const result = await intake.answerInput({ ...reference, action: 'accept', content });
    const errors = !result.ok && result.errors ? errorsByBlock(fields, result.errors) : {};
    if (Object.keys(errors).length > 0) {
      await ack({ response_action: 'errors', errors });
      return;
    }
    await ack();
    if (!result.ok) return tell(submission, submission.user, result.message);
    await showAnswered(submission, question.server, 'accept');
  }

  return { inputClick, formSubmission };
}

export type InputFormHandlers = ReturnType<typeof createInputFormHandlers>;
