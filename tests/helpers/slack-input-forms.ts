import { team } from '../unit/slack/payloads.js';
import type { FakeSlackApi } from './fake-slack-api.js';

/**
 * A server's question on Slack as the tests drive it: the question's message Butler posted in a thread (its
 * Fill in / Decline / Cancel buttons), a person's click on one of them, the modal Fill in opened, and that
 * modal submitted, in the shapes Slack sends (docs.slack.dev `block_actions`, `view_submission`).
 */

type Json = Record<string, unknown>;

const person = (id: string) => ({ id, username: id.toLowerCase(), name: id.toLowerCase(), team_id: team });

/** The question's message in the thread `threadTs`: its ts, blocks (as JSON) and buttons' value. */
export function questionIn(fake: FakeSlackApi, threadTs: string) {
  const message = fake
    .threadMessages('C0GENERAL', threadTs)
    .find((each) => JSON.stringify(each.blocks ?? '').includes('butler_input_fill'));
  if (!message) return undefined;
  const actions = (message.blocks as Json[]).find((block) => block.type === 'actions');
  const value = String((actions?.elements as Json[] | undefined)?.[0]?.value);
  return { threadTs, messageTs: message.ts, value, blocks: JSON.stringify(message.blocks) };
}

export type Question = NonNullable<ReturnType<typeof questionIn>>;

/** `user` clicks the button `actionId` of `question`. */
export function questionClick(user: string, actionId: string, question: Question) {
  const { messageTs, threadTs, value } = question;
  return {
    type: 'block_actions',
    user: person(user),
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: messageTs,
      channel_id: 'C0GENERAL',
      is_ephemeral: false,
      thread_ts: threadTs,
    },
    trigger_id: `1337.${user}.input`,
    team: { id: team, domain: 'butler-test' },
    channel: { id: 'C0GENERAL', name: 'general' },
    message: { type: 'message', ts: messageTs, thread_ts: threadTs, text: 'question' },
    response_url: 'https://hooks.slack.com/actions/T0BUTLER/2/def',
    actions: [{ type: 'button', action_id: actionId, block_id: 'b', value, action_ts: '1' }],
  };
}

/** The modal `views.open` opened last: the view, its inputs, and an input's block id and element by its label. */
export function openedModal(fake: FakeSlackApi) {
  const view = fake.callsTo('views.open').at(-1)?.args.view as Json;
  const inputs = (view.blocks as Json[]).filter((block) => block.type === 'input');
  const input = (label: string) => inputs.find((each) => (each.label as { text: string }).text === label);
  const block = (label: string) => String(input(label)?.block_id);
  const element = (label: string) => input(label)?.element as Json | undefined;
  return { view, inputs, block, element };
}

/** `user` submits the modal `view` with `values` (its `state.values`, by block id). */
export function modalSubmission(user: string, view: Json, values: Json) {
  return {
    type: 'view_submission',
    team: { id: team, domain: 'butler-test' },
    user: person(user),
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    trigger_id: '1337.submit',
    view: {
      id: 'V0FORM',
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      state: { values },
    },
    response_urls: [],
  };
}
