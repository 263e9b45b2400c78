import type {
  ChatAdapter,
  OpenReplyOptions,
  PreparedMessage,
  PrivateLink,
  ReplyStream,
  ReplyTarget,
  TurnEvent,
} from '../../core/contracts/adapter.js';
import {
  type ApprovalCard,
  type ApprovalCardCall,
  durationWords,
  outcomeLine,
  pendingCalls,
  toolLabel,
} from '../../core/contracts/approval-card.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { ChatUser, ConversationAddress, InboundMessage } from '../../core/contracts/events.js';
import type { OutboundFile } from '../../core/contracts/files.js';
import type { InputForm } from '../../core/contracts/input-form.js';
import { joinNames, truncateText } from '../../core/text/index.js';
import { saveFile } from './files.js';

/** The terminal's one direct chat, at its top level (`/new` starts other threads of it). */
export const terminalAddress: ConversationAddress = {
  platform: 'console',
  workspace: 'local',
  channel: 'terminal',
  thread: mainThread,
};

/** What ends a turn from the terminal's point of view. */
export type TurnEnd =
  | { kind: 'reply' }
  | { kind: 'notice' }
  | { kind: 'card'; card: ApprovalCard }
  | { kind: 'question'; form: InputForm };

export const dim = (text: string) => `\u001b[2m${text}\u001b[22m`;
/** A line in Markdown italics (`_Stopped by ana._`) shown as italics, not with its underscores. */
const italicLines = (text: string) => text.replace(/^_([^_\n]+)_$/gm, '\u001b[3m$1\u001b[23m');
export const bold = (text: string) => `\u001b[1m${text}\u001b[22m`;

/** Summary and arguments of a call; who may approve when calls differ in it; its outcome once decided. */
function callLines(call: ApprovalCardCall, indent: string, showWho: boolean): string[] {
  const lines = [
    `${indent}${call.summary}`,
    ...call.argumentsJson.split('\n').map((line) => dim(`${indent}│ ${line}`)),
  ];
  if (showWho && call.status === 'pending') lines.push(`${indent}may approve: ${call.whoMayApprove}`);
  return lines;
}

/** "asked by the ops agent for Alice" for a call Butler delegated to a specialist agent. */
function agentLines(call: ApprovalCardCall, requester: string, indent: string): string[] {
  return call.agent ? [`${indent}asked by the ${call.agent} agent for ${requester}`] : [];
}

function outcomeLines(call: ApprovalCardCall, indent: string): string[] {
  const outcome = outcomeLine(call);
  return outcome ? [bold(`${indent}${outcome}`)] : [];
}

export function renderCard(card: ApprovalCard): string {
  const requester = joinNames(card.requesters.map((user) => user.name ?? user.id));
  const [only] = card.calls;
  if (card.calls.length === 1 && only) {
    return [
      bold(`⚠ Approval needed: ${toolLabel(only)} (${only.risk} risk)`),
      ...agentLines(only, requester, '  '),
      ...callLines(only, '  ', false),
      `  requested by ${requester}; may approve: ${only.whoMayApprove}`,
      `  expires ${card.expiresAt.toLocaleString()}   id ${only.approvalId}`,
      ...outcomeLines(only, '  '),
    ].join('\n');
  }
  const whoMayApprove = new Set(card.calls.map((call) => call.whoMayApprove));
  const sameWho = whoMayApprove.size === 1 ? [...whoMayApprove][0] : undefined;
  const lines = [bold(`⚠ ${card.calls.length} actions need approval`)];
  card.calls.forEach((call, index) => {
    lines.push(
      `  ${index + 1}. ${toolLabel(call)} (${call.risk} risk)`,
      ...agentLines(call, requester, '     '),
    );
    lines.push(...callLines(call, '     ', sameWho === undefined), ...outcomeLines(call, '     '));
  });
  lines.push(
    `  requested by ${requester}${sameWho ? `; may approve: ${sameWho}` : ''}`,
    `  expires ${card.expiresAt.toLocaleString()}   batch ${card.batchId}`,
  );
  return lines.join('\n');
}

/** Where a card stands after a decision that left calls waiting: one line per call. */
export function renderProgress(card: ApprovalCard): string {
  return card.calls
    .map((call, index) => `  ${index + 1}. ${toolLabel(call)}: ${outcomeLine(call) ?? 'waiting'}`)
    .join('\n');
}

/** The commands that decide what is still pending, in the words of this card. */
export function approvalHint(card: ApprovalCard): string {
  const several = pendingCalls(card).length > 1 || card.calls.length > 1;
  const standing = card.standingApprovalHours
    ? `/approve-conversation${several ? ' <n>' : ''} (for ${durationWords(card.standingApprovalHours)}), `
    : '';
  return several
    ? `/approve <n|all>, ${standing}or /reject <n|all> <reason>; /as <user> to act as someone else`
    : `/approve, ${standing}or /reject <reason>; /as <user> to act as someone else`;
}

/** The terminal as a chat platform: streams replies to a stream and reports when a turn ends. */
export class ConsoleAdapter implements ChatAdapter {
  readonly platform = 'console' as const;
  private waiters: Array<(end: TurnEnd) => void> = [];
  private unawaited: ((end: TurnEnd) => void) | undefined;
  private sequence = 0;
  /** A stop was asked: what the turn still streams until it stops is not shown (its note says it stopped). */
  private hushed = false;

  constructor(
    private readonly output: NodeJS.WritableStream,
    /** Where the files Butler sends are saved (`files.terminalDirectory`, relative to where the chat runs). */
    private readonly fileDirectory: string,
  ) {}

  /** Stops showing the reply being streamed: the person asked to stop it, and the turn ends within a moment. */
  hush(): void {
    this.hushed = true;
  }

  /** A turn nobody typed for (a scheduled run) starts below the prompt line, not on it. */
  private get lead(): string {
    return this.waiters.length === 0 ? '\n' : '';
  }

  /** Resolves at the next reply, notice or approval card. */
  nextTurnEnd(): Promise<TurnEnd> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Called when a turn nobody in the chat waited on ends (a scheduled task's run): the chat shows its prompt
   * again, and takes the run's card so that /approve decides it.
   */
  onUnawaitedEnd(handler: (end: TurnEnd) => void): void {
    this.unawaited = handler;
  }

  private ended(end: TurnEnd): void {
    this.hushed = false;
    const waiting = this.waiters.splice(0);
    if (waiting.length === 0) this.unawaited?.(end);
    for (const resolve of waiting) resolve(end);
  }

  async openReply(_target: ReplyTarget, options: OpenReplyOptions = {}): Promise<ReplyStream> {
    const messageId = options.resume?.[0] ?? `console-${++this.sequence}`;
    if (!options.resume?.length) await options.onMessageCreated?.(messageId);
    let written = '';
    this.output.write(`${this.lead}${bold('butler ›')} `);
    return {
      messageIds: [messageId],
      append: async (delta) => {
        written += delta;
        if (!this.hushed) this.output.write(delta);
      },
      finish: async (text) => {
        // The final text may extend what was streamed (an error note) or replace it (a recovered reply).
        this.output.write(italicLines(text.startsWith(written) ? text.slice(written.length) : `\n${text}`));
        this.output.write('\n\n');
        this.ended({ kind: 'reply' });
      },
    };
  }

  async postNotice(_target: ReplyTarget, text: string): Promise<void> {
    this.output.write(`${this.lead}${bold('butler ›')} ${text}\n\n`);
    this.ended({ kind: 'notice' });
  }

  async postApprovalCard(_target: ReplyTarget, card: ApprovalCard): Promise<string> {
    this.output.write(`${this.lead}${renderCard(card)}\n  ${dim(approvalHint(card))}\n\n`);
    this.ended({ kind: 'card', card });
    return `console-card-${card.batchId}`;
  }

  /** The chat asks it field by field, at the prompt (`question-prompts.ts`). */
  async postInputForm(_target: ReplyTarget, form: InputForm): Promise<string> {
    this.ended({ kind: 'question', form });
    return `console-input-${form.inputId}`;
  }

  async updateApprovalCard(
    _address: ConversationAddress,
    _messageId: string,
    card: ApprovalCard,
  ): Promise<void> {
    for (const call of card.calls)
      this.output.write(
        `${dim(`[approval ${call.approvalId}]`)} ${toolLabel(call)}: ${outcomeLine(call) ?? call.status}\n`,
      );
  }

  async showWorking(): Promise<() => Promise<void>> {
    return async () => {};
  }

  /** Whoever types here sits at this machine: "at 9:00" means 9:00 in its time zone. */
  async prepare(message: InboundMessage): Promise<PreparedMessage> {
    const timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return { message: { ...message, user: { ...message.user, timezone } } };
  }

  /**
   * The terminal is already a direct chat with its one person: the note is shown like a notice. It ends no turn
   * (the turn that scheduled the task is still answering).
   */
  async openDirectConversation(
    _user: ChatUser,
    workspace: string,
    note: string,
  ): Promise<ConversationAddress> {
    this.output.write(`${bold('butler ›')} ${note}\n\n`);
    return { ...terminalAddress, workspace };
  }

  /** The terminal has one person, at this machine: a link for them is shown here. */
  async sendPrivateLink(_target: ReplyTarget, _user: ChatUser, link: PrivateLink): Promise<void> {
    this.output.write(`${bold('butler ›')} ${link.text}\n  ${link.label}: ${link.url}\n\n`);
  }

  /** Saves the file on disk and says where; its path is what it was sent as. */
  async sendFile(_target: ReplyTarget, file: OutboundFile): Promise<string> {
    const path = await saveFile(this.fileDirectory, file.name, file.bytes);
    this.output.write(`\n  Butler sent a file: ${path}\n`);
    return path;
  }

  /** A dim line per tool the turn runs, and whether it worked: the terminal's view of what happens. */
  async onTurnEvent(_target: ReplyTarget, event: TurnEvent): Promise<void> {
    if (event.type === 'tool_call')
      this.output.write(
        `\n${dim(`  ⚙ ${event.name} ${truncateText(JSON.stringify(event.args ?? {}), 120)}`)}\n`,
      );
    else if (event.type === 'tool_result')
      this.output.write(
        `${dim(event.error ? `  ✗ ${event.name}: ${truncateText(event.error, 160)}` : `  ✓ ${event.name}`)}\n`,
      );
    // Whoever reads the terminal runs this Butler: say what failed, and how.
    else if (event.type === 'error' && event.detail) this.output.write(`${dim(`  ${event.detail}`)}\n`);
  }
}
