import { cardActionEvent, postToButler } from '../unit/feishu/feishu-events.js';
import type { FakeMessage, Json } from './fake-feishu-api.js';

/**
 * A server's question on Feishu as the tests drive it: the card with a form container Butler sent (its fields
 * and Submit / Decline / Cancel buttons), and a person's click on one of its buttons, with the form's values
 * (`card.action.trigger`, as the Lark SDK delivers it to Butler's card endpoint).
 */

function* components(node: unknown): Generator<Json> {
  if (Array.isArray(node)) for (const item of node) yield* components(item);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Json;
    if (typeof record.tag === 'string') yield record;
    for (const value of Object.values(record)) yield* components(value);
  }
}

/**
 * The question card among `messages`: its message id, content, a button's callback value by its text, its
 * fields, and a field by its label (the markdown line before it, or a checkbox's own text).
 */
export function questionCardIn(messages: readonly FakeMessage[]) {
  const question = messages.find((message) => JSON.stringify(message.content).includes('"tag":"form"'));
  if (!question) return undefined;
  const card = question.content;
  const all = [...components(card)];
  const buttons = all.filter((component) => component.tag === 'button');
  const callbackOf = (text: string) =>
    (buttons.find((button) => (button.text as Json).content === text)?.behaviors as Json[] | undefined)?.find(
      (behavior) => behavior.type === 'callback',
    )?.value;
  const fields = all.filter(
    (component) =>
      typeof component.name === 'string' && component.tag !== 'form' && component.tag !== 'button',
  );
  const fieldOf = (label: string) => {
    const index = all.findIndex(
      (component) =>
        (component.tag === 'markdown' && String(component.content).startsWith(`**${label}**`)) ||
        (component.tag === 'checker' && (component.text as Json).content === label),
    );
    return all.slice(index).find((component) => fields.includes(component));
  };
  const nameOf = (label: string) => String(fieldOf(label)?.name);
  return { cardMessageId: question.messageId, card, callbackOf, fields, fieldOf, nameOf };
}

/** `operator` clicks a button whose callback value is `value` on the card `messageId` (`url`: …/feishu/events). */
export const cardClick = (
  url: string,
  options: { operator: string; value: unknown; messageId: string; formValue?: Json },
) =>
  postToButler(
    url.replace('/events', '/card'),
    cardActionEvent({
      operatorOpenId: options.operator,
      value: options.value,
      messageId: options.messageId,
      chatId: 'oc_group_chat',
      ...(options.formValue ? { formValue: options.formValue } : {}),
    }),
  );
