import type { ChatUser } from '../../core/contracts/events.js';
import type { FormField } from '../../core/contracts/form-fields.js';
import type { InputForm, InputFormRequest } from '../../core/contracts/input-form.js';
import {
  blockLimits,
  plain,
  type RenderedMessage,
  type SlackBlock,
  section,
  slackDate,
} from './block-kit.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { clickerOf, isRecord } from './parse.js';

/**
 * A server's question in Slack (MCP elicitation): a message in the thread with Fill in / Decline / Cancel (a
 * page to open: Open / Decline), the modal Fill in opens (docs.slack.dev "Modals", "Input block"), and what the
 * clicks and the submission mean. Pure functions. Which answer counts is decided by the core, never here.
 */

export const inputActionIds = {
  fill: 'butler_input_fill',
  open: 'butler_input_open',
  decline: 'butler_input_decline',
  cancel: 'butler_input_cancel',
} as const;
export const inputFormCallbackId = 'butler_input_form';

type InputAction = keyof typeof inputActionIds;

/** Slack's modal limits (docs.slack.dev block reference): what a field's input may hold. */
const limits = { label: 2000, hint: 2000, options: 100, optionText: 75, optionValue: 150, inputChars: 3000 };

/** A button's value: which wait, which of its questions. */
const buttonValue = (inputId: string, key: string) => JSON.stringify({ inputId, key });

function questionBlocks(form: InputForm, request: InputFormRequest): SlackBlock[] {
  const asks = `*${escapeMrkdwn(form.server)}* asks <@${form.requester.id}>: ${escapeMrkdwn(request.message)}`;
  const value = buttonValue(form.inputId, request.key);
  const button = (action: InputAction, text: string, extra: Record<string, unknown> = {}) => ({
    type: 'button',
    action_id: inputActionIds[action],
    text: plain(text, blockLimits.buttonText),
    value,
    ...extra,
  });
  const buttons =
    request.mode === 'url'
      ? [
          button('open', `Open ${request.host}`, { url: request.url, style: 'primary' }),
          button('decline', 'Decline'),
        ]
      : [
          button('fill', 'Fill in', { style: 'primary' }),
          button('decline', 'Decline'),
          button('cancel', 'Cancel'),
        ];
  return [
    section(request.mode === 'url' ? `${asks}\nThe page is on *${escapeMrkdwn(request.host)}*.` : asks),
    { type: 'actions', elements: buttons },
  ];
}

/** The question's message: only the requester's clicks count, until it expires. */
export function renderInputForm(form: InputForm): RenderedMessage {
  const blocks = form.requests.flatMap((request) => questionBlocks(form, request));
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `Only <@${form.requester.id}> can answer, until ${slackDate(form.expiresAt)}. Butler never asks for passwords here.`,
      },
    ],
  });
  return { text: `${form.server} asks a question`, blocks };
}

/** The message once answered: no buttons left. */
export function renderInputAnswered(server: string, user: ChatUser, action: string): RenderedMessage {
  const said = action === 'accept' ? 'answered' : action === 'decline' ? 'declined' : 'cancelled';
  const text = `${server}'s question: ${said} by <@${user.id}>.`;
  return { text, blocks: [section(`*${escapeMrkdwn(server)}*'s question: ${said} by <@${user.id}>.`)] };
}

const option = (value: string, label: string) => ({
  text: plain(label, limits.optionText),
  value: value.slice(0, limits.optionValue),
});

function element(field: FormField): Record<string, unknown> {
  const action_id = 'value';
  switch (field.kind) {
    case 'text': {
      if (field.format === 'date')
        return { type: 'datepicker', action_id, ...(field.default ? { initial_date: field.default } : {}) };
      const type =
        field.format === 'email'
          ? 'email_text_input'
          : field.format === 'uri'
            ? 'url_text_input'
            : 'plain_text_input';
      return {
        type,
        action_id,
        ...(field.default ? { initial_value: field.default } : {}),
        ...(type === 'plain_text_input'
          ? {
              max_length: Math.min(field.maxLength ?? limits.inputChars, limits.inputChars),
              ...(field.minLength ? { min_length: Math.min(field.minLength, limits.inputChars) } : {}),
            }
          : {}),
        ...(field.format === 'date-time' ? { placeholder: plain('2026-12-01T09:00:00Z', 150) } : {}),
      };
    }
    case 'number':
      return {
        type: 'number_input',
        action_id,
        is_decimal_allowed: !field.integer,
        ...(field.minimum === undefined ? {} : { min_value: String(field.minimum) }),
        ...(field.maximum === undefined ? {} : { max_value: String(field.maximum) }),
        ...(field.default === undefined ? {} : { initial_value: String(field.default) }),
      };
    case 'boolean': {
      const yes = option('true', field.label);
      return {
        type: 'checkboxes',
        action_id,
        options: [yes],
        ...(field.default ? { initial_options: [yes] } : {}),
      };
    }
    case 'choice': {
      const options = field.options.slice(0, limits.options).map((each) => option(each.value, each.label));
      const initial = options.find((each) => each.value === field.default);
      return { type: 'static_select', action_id, options, ...(initial ? { initial_option: initial } : {}) };
    }
    case 'choices': {
      const options = field.options.slice(0, limits.options).map((each) => option(each.value, each.label));
      const initial = options.filter((each) => field.default?.includes(each.value));
      return {
        type: 'multi_static_select',
        action_id,
        options,
        ...(field.maxItems ? { max_selected_items: field.maxItems } : {}),
        ...(initial.length > 0 ? { initial_options: initial } : {}),
      };
    }
  }
}

/** Fields are named by position: a server's property names need not fit Slack's block ids. */
const blockIdOf = (index: number) => `field_${index}`;

/** The modal Fill in opens: one input per field, required ones not optional, defaults filled in. */
export function renderInputModal(
  server: string,
  click: Pick<InputClick, 'inputId' | 'channel' | 'messageTs' | 'threadTs'>,
  request: InputFormRequest,
): Record<string, unknown> {
  const fields = request.mode === 'form' ? request.fields : [];
  const blocks: SlackBlock[] = [section(escapeMrkdwn(request.message))];
  fields.forEach((field, index) => {
    blocks.push({
      type: 'input',
      block_id: blockIdOf(index),
      // A required checkbox must be ticked; an optional one left unticked answers no.
      optional: !field.required,
      label: plain(field.label, limits.label),
      ...(field.hint ? { hint: plain(field.hint, limits.hint) } : {}),
      element: element(field),
    });
  });
  return {
    type: 'modal',
    callback_id: inputFormCallbackId,
    private_metadata: JSON.stringify({
      inputId: click.inputId,
      key: request.key,
      channel: click.channel,
      messageTs: click.messageTs,
      ...(click.threadTs ? { threadTs: click.threadTs } : {}),
    }),
    title: plain(server, blockLimits.modalTitle),
    submit: plain('Send', blockLimits.modalTitle),
    close: plain('Not now', blockLimits.modalTitle),
    blocks: blocks.slice(0, 100),
  };
}

function referenceOf(text: unknown): { inputId: string; key: string } | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed) && typeof parsed.inputId === 'string' && typeof parsed.key === 'string')
      return { inputId: parsed.inputId, key: parsed.key };
  } catch {
    // Not ours.
  }
  return undefined;
}

function messageOf(
  text: unknown,
): { channel: string; messageTs: string; threadTs: string | undefined } | undefined {
  try {
    const parsed: unknown = JSON.parse(String(text));
    if (!isRecord(parsed) || typeof parsed.channel !== 'string' || typeof parsed.messageTs !== 'string')
      return undefined;
    const threadTs = typeof parsed.threadTs === 'string' ? parsed.threadTs : undefined;
    return { channel: parsed.channel, messageTs: parsed.messageTs, threadTs };
  } catch {
    return undefined;
  }
}

export interface InputClick {
  action: InputAction;
  inputId: string;
  key: string;
  user: ChatUser;
  channel: string;
  messageTs: string;
  threadTs: string | undefined;
  triggerId: string | undefined;
}

/** A click on a question's buttons (`block_actions`). */
export function parseInputClick(body: unknown): InputClick | undefined {
  if (!isRecord(body) || body.type !== 'block_actions' || !Array.isArray(body.actions)) return undefined;
  const names = Object.entries(inputActionIds);
  for (const candidate of body.actions) {
    if (!isRecord(candidate)) continue;
    const action = names.find(([, id]) => id === candidate.action_id)?.[0] as InputAction | undefined;
    const reference = referenceOf(candidate.value);
    const user = clickerOf(body);
    const container = isRecord(body.container) ? body.container : {};
    const channel = typeof container.channel_id === 'string' ? container.channel_id : undefined;
    const messageTs = typeof container.message_ts === 'string' ? container.message_ts : undefined;
    if (!action || !reference || !user || !channel || !messageTs) continue;
    return {
      action,
      ...reference,
      user,
      channel,
      messageTs,
      threadTs: typeof container.thread_ts === 'string' ? container.thread_ts : undefined,
      triggerId: typeof body.trigger_id === 'string' ? body.trigger_id : undefined,
    };
  }
  return undefined;
}

function submittedValue(state: unknown): unknown {
  if (!isRecord(state)) return undefined;
  if (typeof state.selected_date === 'string') return state.selected_date;
  if (isRecord(state.selected_option)) return state.selected_option.value;
  if (Array.isArray(state.selected_options)) {
    const values = state.selected_options.flatMap((each) => (isRecord(each) ? [each.value] : []));
    return state.type === 'checkboxes' ? values.includes('true') : values;
  }
  return state.value ?? undefined;
}

export interface InputSubmission {
  inputId: string;
  key: string;
  user: ChatUser;
  /** The question's message, where the modal was opened from. */
  channel: string;
  messageTs: string;
  threadTs: string | undefined;
  /** The raw values by field position (`field_<n>`): the core checks them against the stored form. */
  values: Map<number, unknown>;
}

/** The modal submitted (`view_submission`). */
export function parseInputSubmission(body: unknown): InputSubmission | undefined {
  if (!isRecord(body) || body.type !== 'view_submission' || !isRecord(body.view)) return undefined;
  const reference = referenceOf(body.view.private_metadata);
  const user = clickerOf(body);
  const message = messageOf(body.view.private_metadata);
  if (!reference || !user || !message) return undefined;
  const values = new Map<number, unknown>();
  const state = isRecord(body.view.state) && isRecord(body.view.state.values) ? body.view.state.values : {};
  for (const [blockId, block] of Object.entries(state)) {
    const index = /^field_(\d{1,3})$/.exec(blockId)?.[1];
    if (index === undefined || !isRecord(block)) continue;
    values.set(Number(index), submittedValue(block.value));
  }
  return { ...reference, ...message, user, values };
}

/**
 * A submission's values by field name, for the fields of the stored form. Every field gets its key, empty ones
 * too: a field left out of an answer takes its default (`core/forms`), and one the person cleared must not.
 */
export function contentOf(
  fields: readonly FormField[],
  values: ReadonlyMap<number, unknown>,
): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  fields.forEach((field, index) => {
    const value = values.get(index);
    // An unticked checkbox is an answer: no.
    content[field.name] = field.kind === 'boolean' ? value === true : value;
  });
  return content;
}

/** The core's errors by field name, as Slack wants them: by block id. */
export function errorsByBlock(
  fields: readonly FormField[],
  errors: Record<string, string>,
): Record<string, string> {
  const byBlock: Record<string, string> = {};
  fields.forEach((field, index) => {
    const error = errors[field.name];
    if (error) byBlock[blockIdOf(index)] = error;
  });
  return byBlock;
}
