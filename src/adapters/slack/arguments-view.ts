import {
  type ApprovalCardCall,
  type ApprovalDetails,
  characters,
  moreCharacters,
} from '../../core/contracts/approval-card.js';
import { codePointPrefix, fittingCodeBlock } from './approval-arguments.js';
import { outcomeIcons, outcomeMrkdwn, riskLabels, toolHeading } from './approval-parts.js';
import { blockLimits, mrkdwn, plain, type SlackBlock, section } from './block-kit.js';

/**
 * The "Show all arguments" modal: every call of a request with its arguments whole, as the database holds
 * them, in code blocks of at most 3,000 characters per section (platforms.md §4). A modal holds at most 100
 * blocks (docs.slack.dev "Modal views"): what does not fit is counted, and the console link says where to
 * read it. It has no submit button: it decides nothing.
 */

export const argumentsViewCallbackId = 'butler_show_arguments';

const modalBlocks = 100;

function statusLine(call: ApprovalCardCall): string {
  const outcome = outcomeMrkdwn(call, 200);
  return outcome ? `${outcomeIcons[call.status]} ${outcome}` : 'Waiting for a decision';
}

function heading(call: ApprovalCardCall, number: number): string {
  return `*${number}.* ${toolHeading(call)} · ${riskLabels[call.risk]}\n${statusLine(call)}`;
}

/** What did not fit: from the call cut short (`from` characters into its arguments) to the last call. */
function leftOutText(details: ApprovalDetails, index: number, from: number): string {
  const calls = details.calls.slice(index);
  const [first, ...rest] = calls;
  if (!first) return '';
  const parts: string[] = [];
  if (from > 0) parts.push(`${moreCharacters(first.argumentsLength - from)} of call ${index + 1}`);
  const whole = from > 0 ? rest : calls;
  if (whole.length > 0) {
    const start = index + 1 + (from > 0 ? 1 : 0);
    const total = whole.reduce((sum, call) => sum + call.argumentsLength, 0);
    const which = whole.length === 1 ? `call ${start}` : `calls ${start}–${index + calls.length}`;
    parts.push(`${which} (${characters(total)})`);
  }
  const where = details.link
    ? `Read them whole in the <${details.link}|admin console>.`
    : "An admin can read them whole in Butler's admin console (Approvals).";
  return `*Not shown here:* ${parts.join(' and ')}. ${where}`;
}

export function renderArgumentsView(details: ApprovalDetails): Record<string, unknown> {
  const blocks: SlackBlock[] = [
    {
      type: 'context',
      elements: [
        mrkdwn(
          'The arguments as Butler stored them with the request: what runs if it is approved. Nothing here decides.',
          blockLimits.sectionText,
        ),
      ],
    },
  ];
  // The last block is kept for saying what did not fit.
  const room = modalBlocks - 1;
  let leftOut: string | undefined;
  details.calls.forEach((call, index) => {
    if (leftOut !== undefined) return;
    let text = heading(call, index + 1);
    let from = 0;
    do {
      if (blocks.length >= room) {
        leftOut = leftOutText(details, index, from);
        return;
      }
      const limit = blockLimits.sectionText - (text ? text.length + 1 : 0);
      const rest = call.argumentsJson.slice(from);
      // A section of its own always takes something, even out of a grapheme longer than a section.
      const fit =
        fittingCodeBlock(rest, limit) ?? (text ? undefined : fittingCodeBlock(rest, limit, codePointPrefix));
      blocks.push(section([text, fit?.block].filter((part) => part).join('\n')));
      from += fit?.shown ?? 0;
      text = '';
    } while (from < call.argumentsJson.length);
  });
  if (leftOut !== undefined) blocks.push(section(leftOut));
  return {
    type: 'modal',
    callback_id: argumentsViewCallbackId,
    title: plain(
      details.calls.length === 1 ? 'Tool call arguments' : 'All arguments',
      blockLimits.modalTitle,
    ),
    close: plain('Close', blockLimits.modalTitle),
    blocks,
  };
}
