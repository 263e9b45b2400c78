import type { ChatAdapter, OpenReplyOptions, ReplyStream, ReplyTarget } from '../../core/adapter.js';
import { type ApprovalCard, outcomeLine } from '../../core/approval-card.js';
import type { ConversationAddress } from '../../core/events.js';

/** What ends a turn from the terminal's point of view. */
export type TurnEnd = { kind: 'reply' } | { kind: 'notice' } | { kind: 'card'; card: ApprovalCard };

const dim = (text: string) => `\u001b[2m${text}\u001b[22m`;
const bold = (text: string) => `\u001b[1m${text}\u001b[22m`;

export function renderCard(card: ApprovalCard): string {
  const outcome = outcomeLine(card);
  const lines = [
    bold(`⚠ Approval needed: ${card.toolName} (${card.risk} risk)`),
    `  ${card.summary}`,
    ...card.argumentsJson.split('\n').map((line) => dim(`  │ ${line}`)),
    `  requested by ${card.requester.name ?? card.requester.id}; may approve: ${card.whoMayApprove}`,
    `  expires ${card.expiresAt.toLocaleString()}   id ${card.approvalId}`,
  ];
  if (outcome) lines.push(bold(`  ${outcome}`));
  return lines.join('\n');
}

/** The terminal as a chat platform: streams replies to a stream and reports when a turn ends. */
export class ConsoleAdapter implements ChatAdapter {
  readonly platform = 'console' as const;
  private waiters: Array<(end: TurnEnd) => void> = [];
  private sequence = 0;

  constructor(private readonly output: NodeJS.WritableStream) {}

  /** Resolves at the next reply, notice or approval card. */
  nextTurnEnd(): Promise<TurnEnd> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private ended(end: TurnEnd): void {
    for (const resolve of this.waiters.splice(0)) resolve(end);
  }

  async openReply(_target: ReplyTarget, options: OpenReplyOptions = {}): Promise<ReplyStream> {
    const messageId = options.resume?.[0] ?? `console-${++this.sequence}`;
    if (!options.resume?.length) await options.onMessageCreated?.(messageId);
    let written = '';
    this.output.write(`${bold('butler ›')} `);
    return {
      messageIds: [messageId],
      append: async (delta) => {
        written += delta;
        this.output.write(delta);
      },
      finish: async (text) => {
        // The final text may extend what was streamed (an error note) or replace it (a recovered reply).
        this.output.write(text.startsWith(written) ? text.slice(written.length) : `\n${text}`);
        this.output.write('\n\n');
        this.ended({ kind: 'reply' });
      },
    };
  }

  async postNotice(_target: ReplyTarget, text: string): Promise<void> {
    this.output.write(`${bold('butler ›')} ${text}\n\n`);
    this.ended({ kind: 'notice' });
  }

  async postApprovalCard(_target: ReplyTarget, card: ApprovalCard): Promise<string> {
    this.output.write(
      `${renderCard(card)}\n  ${dim('/approve, or /reject <reason>; /as <user> to act as someone else')}\n\n`,
    );
    this.ended({ kind: 'card', card });
    return `console-card-${card.approvalId}`;
  }

  async updateApprovalCard(
    _address: ConversationAddress,
    _messageId: string,
    card: ApprovalCard,
  ): Promise<void> {
    this.output.write(`${dim(`[approval ${card.approvalId}]`)} ${outcomeLine(card) ?? card.status}\n`);
  }

  async showWorking(): Promise<() => Promise<void>> {
    return async () => {};
  }
}
