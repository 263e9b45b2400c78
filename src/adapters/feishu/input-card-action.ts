import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { CardActionEvent, CardActionResponse } from './event-payloads.js';
import { formContent, type InputButtonValue, renderInputAnsweredCard } from './input-form-card.js';

/**
 * A click on a server's question card: Submit (the form's values), Open, Decline or Cancel. Only the question's
 * requester counts, and the core checks the values against the stored form: anyone else, or values that do not
 * fit, get a toast and the card stays; an answer replaces the card at once.
 */
export async function answerInputCard(
  value: InputButtonValue,
  event: CardActionEvent,
  dependencies: { intake: ButlerIntake; logger: Logger },
): Promise<CardActionResponse> {
  const { intake, logger } = dependencies;
  const reference = {
    user: { platform: 'feishu' as const, id: event.operatorOpenId },
    inputId: value.input_id,
    key: value.key,
  };
  const fields = { eventId: event.eventId, inputId: value.input_id, user: event.operatorOpenId };
  try {
    const question = await intake.inputQuestion(reference);
    if (!question.ok) return { toast: { type: 'info', content: question.message } };
    const action =
      value.input_action === 'submit' || value.input_action === 'open' ? 'accept' : value.input_action;
    const formFields = question.request.mode === 'form' ? question.request.fields : [];
    const content =
      value.input_action === 'submit'
        ? formContent(formFields, value.question ?? 0, event.formValue)
        : undefined;
    const result = await intake.answerInput({ ...reference, action, ...(content ? { content } : {}) });
    logger.info({ ...fields, action, ok: result.ok }, 'Feishu question answer');
    if (!result.ok) {
      // Feishu shows no error under a field: the toast names each one.
      const labels = new Map(formFields.map((field) => [field.name, field.label]));
      const errors = Object.entries(result.errors ?? {}).map(
        ([name, error]) => `${labels.get(name) ?? name}: ${error}`,
      );
      return { toast: { type: 'error', content: errors.length > 0 ? errors.join(' ') : result.message } };
    }
    return {
      toast: { type: 'success', content: 'Answered.' },
      card: { type: 'raw', data: renderInputAnsweredCard(question.server, reference.user, action) },
    };
  } catch (error) {
    logger.error({ ...fields, err: error }, 'Feishu question answer failed');
    return { toast: { type: 'error', content: 'Butler could not record your answer. Please try again.' } };
  }
}
