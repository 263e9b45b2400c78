import type {
  ApprovalCard,
  ApprovalDetails,
  ApprovalDetailsRequest,
  DecisionResult,
} from './approval-card.js';
import type {
  AcceptResult,
  ApprovalDecisionInput,
  ChatUser,
  ConversationAddress,
  InboundMessage,
  Person,
  Platform,
  ThreadContextMessage,
} from './events.js';
import type { FeedbackInput, FeedbackResult } from './feedback-records.js';
import type { FileBytes, InboundFile, OutboundFile } from './files.js';
import type { InputAnswerInput, InputAnswerResult, InputForm, InputQuestionResult } from './input-form.js';
import type { MessageSearch } from './message-search.js';
import type { DecisionSubject, HomeView } from './read-models.js';

/** Where a reply goes: the conversation, and the platform message being answered when there is one. */
export interface ReplyTarget {
  address: ConversationAddress;
  /** Platform id of the message being answered (reply anchor, status target). */
  replyTo?: string;
  /**
   * The user the reply answers (Slack streams to channels need the recipient); empty when the turn answers no
   * one of this platform (a task an API key made for a Slack channel).
   */
  userId: string;
  /** That user's own workspace when it is not the conversation's (a Slack Connect guest). */
  userTeam?: string;
  /**
   * Every message the turn answers, when there are several sent together (`replyTo` is the last); the HTTP
   * API ends each message's stream at its own turn.
   */
  messageIds?: readonly string[];
}

export interface OpenReplyOptions {
  /**
   * Platform messages an interrupted earlier attempt at this reply created (crash recovery).
   * The adapter should overwrite them rather than post a second reply.
   */
  resume?: readonly string[];
  /** Called whenever the stream creates a platform message, so the core can record it before going on. */
  onMessageCreated?: (messageId: string) => void | Promise<void>;
}

/**
 * A reply being written. The adapter decides how to show it (native streaming, post-then-edit) and
 * throttles platform calls; the core only appends text and finishes.
 */
export interface ReplyStream {
  /** Platform message ids this reply consists of, in order (a long reply may roll over into several). */
  readonly messageIds: readonly string[];
  append(delta: string): Promise<void>;
  /** Ends the reply. `text` is the complete reply; the adapter makes sure all of it is shown. */
  finish(text: string): Promise<void>;
}

/**
 * What happened in a turn besides its text, for adapters that show more than a chat message does (the HTTP
 * API's event stream). Approval requests reach adapters as cards.
 */
export type TurnEvent =
  /** A scheduled run begins: the prompt it asks, as its task's creator wrote it (no platform message shows it). */
  | { type: 'run'; scheduleId: string; prompt: string }
  | { type: 'tool_call'; id: string; name: string; args: unknown }
  | { type: 'tool_result'; id: string; name: string; output: string; error: string | null }
  /** `turnId` names the turn whose reply this ends (what feedback on it names). */
  | { type: 'done'; turnId: string; usage: { promptTokens: number; completionTokens: number } }
  /**
   * `detail`: what failed and how, for a channel whose one reader is Butler's operator (the terminal chat), such
   * as which model endpoint could not be reached; other channels show `error` only.
   */
  | { type: 'error'; error: string; detail?: string }
  /** The turn parked until a person connects `server` (they were sent a private link). */
  | { type: 'connection_required'; server: string; expiresAt: string };

/** How a turn ended, for adapters that show a turn's life beside its reply (Slack's agent sessions). */
export type TurnOutcome = 'replied' | 'parked' | 'stopped' | 'failed' | 'interrupted';

/** A turn that begins: whom it answers, and what opened the conversation when this is its first turn. */
export interface TurnStart {
  requester: ChatUser;
  /** The text of the first message the turn answers; absent for the continuation after a decision. */
  text?: string;
  /** Whether the conversation had no history before this turn. */
  firstTurn: boolean;
}

/** A link for one person's eyes only (a Connect link): what to say, the button's label, the URL. */
export interface PrivateLink {
  text: string;
  label: string;
  url: string;
  /** The link's id: a place that keeps what it sent (the API's event log) keeps this, never the URL. */
  id: string;
  expiresAt: Date;
}

/** What the core needs from a platform to answer. Implemented by each adapter. */
export interface ChatAdapter {
  readonly platform: Platform;
  openReply(target: ReplyTarget, options?: OpenReplyOptions): Promise<ReplyStream>;
  /** A short standalone message (errors, rate-limit notices). */
  postNotice(target: ReplyTarget, text: string): Promise<void>;
  /** Posts an approval card; returns the platform message id that shows it. */
  postApprovalCard(target: ReplyTarget, card: ApprovalCard): Promise<string>;
  /** Replaces a posted approval card with its outcome (used for expiry and decisions made elsewhere). */
  updateApprovalCard(address: ConversationAddress, messageId: string, card: ApprovalCard): Promise<void>;
  /**
   * Shows a server's question to the person who asked for the call, where only they can answer it; returns the
   * platform message that shows it, when there is one. Absent where forms cannot be shown: such a question is
   * declined.
   */
  postInputForm?(target: ReplyTarget, form: InputForm): Promise<string>;
  /**
   * Shows that Butler is working (a status line, a reaction). Returns the function that clears it.
   * Failures are the adapter's to swallow: an indicator never blocks a reply, and the core never waits for
   * either call in a turn's path.
   */
  showWorking(target: ReplyTarget): Promise<() => Promise<void>>;
  /**
   * Optional: puts `status` ("is asking ops…") in the working indicator where the platform shows text
   * there (Slack's assistant status). Same rules as `showWorking`: never throws, never blocks a reply; the
   * function `showWorking` returned clears it.
   */
  showProgress?(target: ReplyTarget, status: string): Promise<void>;
  /**
   * Optional: a turn begins and ends (Slack's agent session goes `processing`, then `active`). Called for the
   * whole turn, the streaming reply included, before any working indicator. Cosmetic: the core never waits for
   * either (their promises settle once the platform was told, or the adapter gave up), so `turnEnded` may come
   * before `turnStarted` settled: the adapter keeps the order, and may drop a start the platform never showed
   * together with its end. Never throws.
   */
  turnStarted?(target: ReplyTarget, start: TurnStart): Promise<void>;
  turnEnded?(target: ReplyTarget, outcome: TurnOutcome): Promise<void>;
  /**
   * Optional: a running turn waits for a person (a 2025 server's question mid-call), then goes on (Slack's
   * session goes `suspended`, then `processing` again). Cosmetic, with the same rules as `turnStarted`.
   */
  turnWaiting?(target: ReplyTarget, waiting: boolean): Promise<void>;
  /** Optional: tool calls, results and the turn's end as they happen. A failure here never stops a turn. */
  onTurnEvent?(target: ReplyTarget, event: TurnEvent): Promise<void>;
  /**
   * Optional crash recovery: Butler's messages in the conversation after `after` (a platform message
   * id) that are not in `known`, oldest first. A retried turn overwrites them instead of leaving a
   * half-written reply that a crash kept from being recorded beside the new one. Platforms whose
   * message ids are ordered use the newest of `after` and `known` as the lower bound.
   */
  findUnrecordedReplies?(
    target: ReplyTarget,
    options: { after: string; known: readonly string[] },
  ): Promise<string[]>;
  /**
   * Optional enrichment, run by the worker before a turn, off the acknowledgement path: resolve
   * mentions to names, look up the sender's name, and (for a conversation that starts inside an
   * existing thread) fetch the thread's recent messages. Butler uses the message as accepted if it throws.
   */
  prepare?(message: InboundMessage, options: { newConversation: boolean }): Promise<PreparedMessage>;
  /**
   * Optional: downloads a file a person shared (`InboundMessage.files`), in the worker. Reads at most
   * `maxBytes` and throws `FileTooLargeError` past it. Credentials go only to the platform's own hosts.
   */
  fetchFile?(
    file: InboundFile,
    options: { maxBytes: number; signal?: AbortSignal; workspace: string },
  ): Promise<FileBytes>;
  /**
   * Optional: sends a file into the conversation, in the thread the reply goes to. Returns the platform id
   * of what it posted (message or file id). Platforms without it get the file's download link as text.
   */
  sendFile?(target: ReplyTarget, file: OutboundFile): Promise<string>;
  /**
   * Optional: the direct chat between Butler and `user` in `workspace`, opened if needed, with `note` posted
   * there (so the person knows what will arrive, and so platforms that give a chat its id only with a first
   * message have one). Scheduled tasks that answer "remind me" use it. Throws when the platform refuses.
   */
  openDirectConversation?(user: ChatUser, workspace: string, note: string): Promise<ConversationAddress>;
  /**
   * Optional: shows `link` to `user` alone, never where others read it (Slack: an ephemeral message in the
   * conversation; Feishu: a card in their direct chat; the API: an event on the key's own stream; the
   * terminal: its one user). Throws when it cannot be delivered privately.
   */
  sendPrivateLink?(target: ReplyTarget, user: ChatUser, link: PrivateLink): Promise<void>;
  /**
   * Optional: the name the platform shows for `userId` in `workspace` (from its cached profile lookups), for
   * text about someone Butler knows only by id, such as who was reminded of a request. Undefined when the
   * platform does not say; never throws.
   */
  nameOf?(userId: string, workspace: string): Promise<string | undefined>;
  /** Searches the workspace's messages as the asker may read them; absent where the platform cannot. */
  readonly messageSearch?: MessageSearch;
}

export interface PreparedMessage {
  message: InboundMessage;
  /** Earlier messages of the thread, oldest first, not including `message`. */
  threadContext?: ThreadContextMessage[];
}

/** What adapters call on the core. */
export interface ButlerIntake {
  /**
   * Durably records an inbound message (deduplicated). Acknowledge the platform only after this resolves.
   * `onStored` runs once the message is stored, before this process starts its turn.
   */
  accept(message: InboundMessage, onStored?: () => Promise<void>): Promise<AcceptResult>;
  /** Takes an approval decision from a click: checked against who clicked, first valid decision wins. */
  decide(input: ApprovalDecisionInput): Promise<DecisionResult>;
  /** Takes an answer to a server's question: only its requester's counts, checked against the form, once. */
  answerInput(input: InputAnswerInput): Promise<InputAnswerResult>;
  /** A waiting question, when `user` may answer it (what a platform builds its form from); answers nothing. */
  inputQuestion(input: Pick<InputAnswerInput, 'user' | 'inputId' | 'key'>): Promise<InputQuestionResult>;
  /**
   * The whole arguments of a request's calls, read from the database ("Show all arguments"): decides
   * nothing. Undefined when the asking platform has no such request.
   */
  approvalDetails(request: ApprovalDetailsRequest): Promise<ApprovalDetails | undefined>;
  /** Whether `user` may decide `approval` now, and why not: what a decision would answer, decided nothing. */
  mayDecide(approval: DecisionSubject, user: Person): { allowed: true } | { allowed: false; reason: string };
  /**
   * A person's own page (Slack's App Home): pending requests they may decide or asked for, with whether
   * they may decide each, their recent conversations, and what Butler can do. Decides nothing.
   */
  /** `workspace`: only what belongs there (a Slack member id names a person within one workspace). */
  home(person: Person, workspace?: string): Promise<HomeView>;
  /**
   * Whether a message would be taken, before the files it carries are read and stored: `duplicate` when its
   * dedup key was taken already (an Idempotency-Key sent twice), `rate_limited` when its sender already sent
   * as many messages this minute as they may. Takes nothing.
   */
  precheck(input: {
    address: ConversationAddress;
    user: ChatUser;
    dedupKey: string;
  }): Promise<'ok' | 'duplicate' | 'rate_limited'>;
  /**
   * Stores a file a person hands over with its bytes (an API upload, the terminal chat) before the message
   * that shares it is accepted; returns what that message names it by in `files`. Throws
   * `FileTooLargeError` past the per-file limit, and refuses people the allowlists leave out.
   */
  shareFile(input: { address: ConversationAddress; user: ChatUser; file: FileBytes }): Promise<InboundFile>;
  /**
   * Stops the turn running in the conversation, whichever process runs it: within a second its model call
   * is aborted, calls not yet started never start, and the reply keeps what was written, marked with who
   * stopped it. `idle` when nothing was running. Anyone the allowlists let talk to Butler there may stop it.
   */
  stop(input: {
    address: ConversationAddress;
    user: ChatUser;
    isDirect?: boolean;
  }): Promise<'stopping' | 'idle'>;
  /**
   * Stores a person's rating of a Butler reply (a feedback button, the API), or changes the one they gave it;
   * a message that is not a Butler reply is `not_a_reply`. The result's message is for the rater alone.
   */
  recordFeedback(input: FeedbackInput): Promise<FeedbackResult>;
  /** Whether Butler already takes part in this conversation (e.g. a Slack thread it has answered in). */
  isKnownConversation(address: ConversationAddress): Promise<boolean>;
  /**
   * Butler was removed from `workspace` (Slack's or a Feishu store app's app_uninstalled): its scheduled tasks and
   * pending approvals pause, they do not fail or vanish. `installed` resumes what this paused (Butler added there
   * again); each approval then has the time it had left.
   */
  workspaceRemoved(platform: Platform, workspace: string): Promise<void>;
  workspaceInstalled(platform: Platform, workspace: string): Promise<void>;
}
