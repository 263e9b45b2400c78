import {
  type ApprovalCard,
  type ApprovalCardCall,
  type Decision,
  durationWords,
  toolLabel,
} from '../../core/contracts/approval-card.js';
import { truncateText } from '../../core/text/index.js';
import type { JsonRecord } from './fields.js';

/**
 * The buttons of a Feishu approval card (card JSON 2.0): per call, "Approve all" / "Reject all", and the
 * ones that only read ("Show all arguments", the console link). Values carry ids only: authority is the
 * database and the clicking user.
 */

/** "Approve all" / "Reject all": a standing approval is per tool, so it is never granted for a whole card. */
export type BatchDecision = Exclude<Decision, 'approve_for_conversation'>;

/** What a button's callback carries back: one call and a decision, or the card's batch for the "all" buttons. */
export type ApprovalButtonValue =
  | { approval_id: string; decision: Decision }
  | { batch_id: string; decision: BatchDecision };

/** "Show all arguments": of one call, or of every call of the card. It decides nothing. */
export type ShowArgumentsValue = { show_arguments: string } | { show_arguments_batch: string };

export type CardButtonValue = ApprovalButtonValue | ShowArgumentsValue;

const confirmTextLimit = 300;
const confirmTitleLimit = 100;

export function plainText(content: string): JsonRecord {
  return { tag: 'plain_text', content };
}

function confirm(title: string, text: string, textLimit = confirmTextLimit): JsonRecord {
  return {
    title: plainText(truncateText(title, confirmTitleLimit)),
    text: plainText(truncateText(text, Math.min(textLimit, confirmTextLimit))),
  };
}

function button(options: {
  id: string;
  type: string;
  text: string;
  value: CardButtonValue;
  confirm?: JsonRecord | undefined;
}): JsonRecord {
  return {
    tag: 'button',
    element_id: options.id,
    type: options.type,
    text: plainText(options.text),
    behaviors: [{ type: 'callback', value: options.value }],
    ...(options.confirm ? { confirm: options.confirm } : {}),
  };
}

/**
 * The buttons that only read: "Show all arguments" when the card left something out, and the console link
 * (an `open_url` behavior) when Butler knows its public address.
 */
export function readingButtons(card: ApprovalCard, show: ShowArgumentsValue | undefined): JsonRecord[] {
  const buttons: JsonRecord[] = [];
  if (show)
    buttons.push(button({ id: 'show_arguments', type: 'default', text: 'Show all arguments', value: show }));
  if (card.link)
    buttons.push({
      tag: 'button',
      element_id: 'open_console',
      type: 'default',
      text: plainText('Open in console'),
      behaviors: [{ type: 'open_url', default_url: card.link }],
    });
  return buttons;
}

/** Flow wraps the buttons onto a second line on narrow screens instead of squeezing them. */
export function buttonRow(buttons: JsonRecord[]): JsonRecord {
  return {
    tag: 'column_set',
    flex_mode: 'flow',
    horizontal_spacing: '8px',
    columns: buttons.map((element) => ({ tag: 'column', width: 'auto', elements: [element] })),
  };
}

/**
 * Approve / Reject / Approve for this conversation of one call, then `extra`; `index` keeps element ids
 * unique per card.
 */
export function callButtons(
  card: ApprovalCard,
  call: ApprovalCardCall,
  index: number,
  layout: { summaryLimit: number },
  extra: JsonRecord[] = [],
): JsonRecord {
  const label = toolLabel(call);
  const high = call.risk === 'high';
  const buttons = [
    button({
      id: `approve_${index}`,
      type: 'primary_filled',
      text: 'Approve',
      value: { approval_id: call.approvalId, decision: 'approve' },
      confirm: high
        ? confirm(`Run ${label}?`, `High-risk action: ${call.summary}`, layout.summaryLimit)
        : undefined,
    }),
    button({
      id: `reject_${index}`,
      type: 'danger',
      text: 'Reject',
      value: { approval_id: call.approvalId, decision: 'reject' },
    }),
  ];
  const hours = card.standingApprovalHours;
  if (hours !== undefined && hours > 0) {
    const duration = durationWords(hours);
    buttons.push(
      button({
        id: `standing_${index}`,
        type: 'primary',
        text: `Approve for this conversation (${duration})`,
        value: { approval_id: call.approvalId, decision: 'approve_for_conversation' },
        // It covers every later call of the tool here, whoever asks: worth a second look when high risk.
        confirm: high
          ? confirm(
              `Approve ${label} for this conversation?`,
              `For ${duration}, Butler runs ${label} in this conversation without asking, whoever asks.`,
            )
          : undefined,
      }),
    );
  }
  return buttonRow([...buttons, ...extra]);
}

export function batchButtons(
  card: ApprovalCard,
  pending: readonly ApprovalCardCall[],
  extra: JsonRecord[],
): JsonRecord {
  const high = pending.filter((call) => call.risk === 'high');
  return buttonRow([
    button({
      id: 'approve_all',
      type: 'primary_filled',
      text: `Approve all ${pending.length}`,
      value: { batch_id: card.batchId, decision: 'approve' },
      confirm:
        high.length > 0
          ? confirm(
              `Run ${pending.length} actions?`,
              `High-risk among them: ${[...new Set(high.map((call) => toolLabel(call)))].join(', ')}`,
            )
          : undefined,
    }),
    button({
      id: 'reject_all',
      type: 'danger',
      text: `Reject all ${pending.length}`,
      value: { batch_id: card.batchId, decision: 'reject' },
    }),
    ...extra,
  ]);
}
