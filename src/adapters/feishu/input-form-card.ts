import type { ChatUser } from '../../core/contracts/events.js';
import type { FormField } from '../../core/contracts/form-fields.js';
import type { InputForm, InputFormRequest } from '../../core/contracts/input-form.js';
import { truncateText } from '../../core/text/index.js';
import { buttonRow, plainText } from './approval-buttons.js';
import { escapeMarkdown, userMarkdown } from './approval-markdown.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';

/**
 * A server's question on Feishu (MCP elicitation) as a card JSON 2.0: a `form` container built from the
 * question's fields (input, select_static, multi_select_static, checker, date_picker) with Submit, and Decline
 * and Cancel beside it; a page to open becomes Open / Decline. Values carry ids only: who may answer, and
 * whether the answer fits the form, the core decides on the server.
 */

export type InputButtonAction = 'submit' | 'open' | 'decline' | 'cancel';

/** What a question's button carries back. */
export interface InputButtonValue {
  input_id: string;
  key: string;
  input_action: InputButtonAction;
  /** Submit: which question of the card the form's fields are (`q<question>_f<field>`). */
  question?: number;
}

const optionLimit = 100;

const markdown = (content: string): JsonRecord => ({ tag: 'markdown', content });

/** Form fields are named by position (`q<question>_f<field>`): a server's property names need not fit Feishu's. */
export const fieldName = (question: number, field: number) => `q${question}_f${field}`;

function button(text: string, type: string, value: InputButtonValue, extra: JsonRecord = {}): JsonRecord {
  return { tag: 'button', type, text: plainText(text), behaviors: [{ type: 'callback', value }], ...extra };
}

function fieldElement(field: FormField, name: string): JsonRecord {
  const required = field.required;
  switch (field.kind) {
    case 'text':
      if (field.format === 'date')
        return {
          tag: 'date_picker',
          name,
          required,
          ...(field.default ? { initial_date: field.default } : {}),
        };
      return {
        tag: 'input',
        name,
        required,
        ...(field.maxLength ? { max_length: Math.min(field.maxLength, 1000) } : {}),
        ...(field.default ? { default_value: field.default } : {}),
        ...(field.format
          ? { placeholder: plainText(field.format === 'date-time' ? '2026-12-01T09:00:00Z' : field.format) }
          : {}),
      };
    case 'number':
      return {
        tag: 'input',
        name,
        required,
        ...(field.default === undefined ? {} : { default_value: String(field.default) }),
      };
    case 'boolean':
      return { tag: 'checker', name, checked: field.default === true, text: plainText(field.label) };
    case 'choice':
    case 'choices': {
      const options = field.options.slice(0, optionLimit).map((option) => ({
        text: plainText(truncateText(option.label, 100)),
        value: option.value,
      }));
      if (field.kind === 'choice')
        return {
          tag: 'select_static',
          name,
          required,
          options,
          ...(field.default ? { initial_option: field.default } : {}),
        };
      return {
        tag: 'multi_select_static',
        name,
        required,
        options,
        ...(field.default?.length ? { selected_values: field.default } : {}),
      };
    }
  }
}

function questionElements(form: InputForm, request: InputFormRequest, index: number): JsonRecord[] {
  const reference = { input_id: form.inputId, key: request.key };
  const asks = `**${escapeMarkdown(form.server)}** asks ${userMarkdown(form.requester)}: ${escapeMarkdown(request.message)}`;
  if (request.mode === 'url')
    return [
      markdown(`${asks}\nThe page is on **${escapeMarkdown(request.host)}**.`),
      buttonRow([
        {
          tag: 'button',
          type: 'primary_filled',
          text: plainText(truncateText(`Open ${request.host}`, 60)),
          behaviors: [
            { type: 'open_url', default_url: request.url },
            { type: 'callback', value: { ...reference, input_action: 'open' } satisfies InputButtonValue },
          ],
        },
        button('Decline', 'default', { ...reference, input_action: 'decline' }),
      ]),
    ];
  const fields = request.fields.flatMap((field, position) => {
    const label = `**${escapeMarkdown(field.label)}**${field.required ? ' *' : ''}${field.hint ? `\n${escapeMarkdown(field.hint)}` : ''}`;
    const input = fieldElement(field, fieldName(index, position));
    // A checkbox shows its own label.
    return field.kind === 'boolean' ? [input] : [markdown(label), input];
  });
  return [
    markdown(asks),
    {
      tag: 'form',
      name: `question_${index}`,
      elements: [
        ...fields,
        buttonRow([
          button(
            'Submit',
            'primary_filled',
            { ...reference, input_action: 'submit', question: index },
            {
              form_action_type: 'submit',
              name: `submit_${index}`,
            },
          ),
        ]),
      ],
    },
    buttonRow([
      button('Decline', 'default', { ...reference, input_action: 'decline' }),
      button('Cancel', 'default', { ...reference, input_action: 'cancel' }),
    ]),
  ];
}

export function renderInputFormCard(form: InputForm): JsonRecord {
  const elements = form.requests.flatMap((request, index) => questionElements(form, request, index));
  elements.push(
    markdown(`Only ${userMarkdown(form.requester)} can answer. Butler never asks for passwords here.`),
  );
  return {
    schema: '2.0',
    config: { update_multi: true, summary: { content: `${form.server} asks a question` } },
    header: { title: plainText(truncateText(`${form.server} asks`, 100)), template: 'blue' },
    body: { elements },
  };
}

/** The card once answered: no form left. */
export function renderInputAnsweredCard(server: string, user: ChatUser, action: string): JsonRecord {
  const said = action === 'accept' ? 'answered' : action === 'decline' ? 'declined' : 'cancelled';
  return {
    schema: '2.0',
    config: { update_multi: true, summary: { content: `${server}'s question: ${said}` } },
    header: { title: plainText(truncateText(`${server} asked`, 100)), template: 'grey' },
    body: { elements: [markdown(`${escapeMarkdown(server)}'s question: ${said} by ${userMarkdown(user)}.`)] },
  };
}

const actions: readonly string[] = ['submit', 'open', 'decline', 'cancel'];

/** A question button's value; undefined for any other. */
export function parseInputButton(value: unknown): InputButtonValue | undefined {
  const record = asRecord(value);
  const inputId = stringField(record, 'input_id');
  const key = stringField(record, 'key');
  const action = stringField(record, 'input_action');
  if (!inputId || key === undefined || !action || !actions.includes(action)) return undefined;
  const question = record?.question;
  return {
    input_id: inputId,
    key,
    input_action: action as InputButtonAction,
    ...(typeof question === 'number' && Number.isInteger(question) && question >= 0 ? { question } : {}),
  };
}

/**
 * A submitted form's raw values by field name, for the fields of the stored question. Every field gets its key,
 * empty ones too: a field left out of an answer takes its default (`core/forms`), and one the person cleared must not.
 */
export function formContent(
  fields: readonly FormField[],
  question: number,
  formValue: JsonRecord | undefined,
): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  fields.forEach((field, position) => {
    const value = formValue?.[fieldName(question, position)];
    // The date picker answers "2026-12-01 +0800": the date is what was picked.
    if (field.kind === 'text' && field.format === 'date' && typeof value === 'string')
      content[field.name] = value.slice(0, 10);
    else if (field.kind === 'boolean') content[field.name] = value === true || value === 'true';
    else content[field.name] = value;
  });
  return content;
}
