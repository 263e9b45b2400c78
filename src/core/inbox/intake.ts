import type { ApprovalService } from '../approvals/approval-service.js';
import type { ButlerIntake } from '../contracts/adapter.js';
import type { ApprovalDetails, ApprovalDetailsRequest, DecisionResult } from '../contracts/approval-card.js';
import { encodeConversationKey, workspaceKeyPrefix } from '../contracts/conversation-key.js';
import { NotAllowedError } from '../contracts/errors.js';
import type {
  AcceptResult,
  ApprovalDecisionInput,
  ChatUser,
  ConversationAddress,
  InboundMessage,
  Person,
  Platform,
} from '../contracts/events.js';
import { onPlatform } from '../contracts/events.js';
import type { FileBytes, InboundFile } from '../contracts/files.js';
import type { InputAnswerInput, InputAnswerResult, InputQuestionResult } from '../contracts/input-form.js';
import type { Logger } from '../contracts/logger.js';
import { noopObserver } from '../contracts/observer.js';
import { type People, senderKey } from '../contracts/people.js';
import type { Capabilities, HomeView } from '../contracts/read-models.js';
import type { FeedbackInput, FeedbackResult, Store } from '../contracts/store.js';
import { FeedbackRecorder } from '../feedback/index.js';
import type { FileIntake } from '../files/file-intake.js';
import type { InputService } from '../inputs/index.js';
import { type MessageGrants, withoutGrant } from '../search/grants.js';
import type { TurnStops } from '../stop/turn-stops.js';
import { cleanJson, graphemePrefix } from '../text/index.js';
import type { Admission } from './admission.js';
import { noCapabilities, readHome } from './home.js';

/** Why a workspace's tasks are paused while Butler is not installed there (and what resuming looks for). */
const removedNote = 'paused: Butler was removed from this workspace';

/** Slack shows at most 40,000 characters of a message (platforms.md §7); a longer one is cut there too. */
export const defaultMaxMessageChars = 40_000;

/** What a person writes to stop Butler mid-answer ("stop", "/stop", "停止"), and nothing else. */
const stopWords = /^(?:\/?stop|停止|停)[.!。！]*$/i;

/** Per-platform allowlists; an omitted list allows everyone. */
export interface AccessRules {
  workspaces?: readonly string[] | undefined;
  channels?: readonly string[] | undefined;
  users?: readonly string[] | undefined;
}

const allows = (list: readonly string[] | undefined, value: string) =>
  list === undefined || list.length === 0 || list.includes(value);

/**
 * What adapters call. `accept` is one deduplicating INSERT and returns: the adapter acknowledges the
 * platform right after it, and the worker answers later. Messages outside the allowlists are dropped.
 * Everything that comes in is cleaned here first (`text.ts`), whichever adapter it came from.
 */
export class ButlerService implements ButlerIntake {
  constructor(
    private readonly store: Store,
    private readonly approvals: ApprovalService,
    private readonly access: Readonly<Partial<Record<Platform, AccessRules | undefined>>>,
    /** Who is who: allowlists and rate limits are a person's, whichever identity they write from. */
    private readonly people: People,
    private readonly logger: Logger,
    private readonly onWork: () => void,
    private readonly options: {
      /** Longest message text kept, for every platform alike; the reply says when a message was cut. */
      maxMessageChars?: number;
      /** Told how long storing each delivery took: the worker starts fewer turns while it is slow. */
      admission?: Admission;
      /** Where files handed over with their bytes are stored; absent: `shareFile` refuses them. */
      files?: FileIntake;
      /** Stop requests for running turns; absent: `stop` finds nothing to stop. */
      stops?: TurnStops;
      /** Ratings of replies; absent: they are stored and reported to no tracer. */
      feedback?: FeedbackRecorder;
      /** What Butler can do now (tools, agents), for people's home pages; absent: nothing listed. */
      capabilities?: () => Capabilities;
      /** Messages a person may send a minute (the worker enforces it; `precheck` says it early). */
      messagesPerMinute?: number;
      /** Seals the credentials platforms give with a message (`InboundMessage.grant`); absent: they are dropped. */
      grants?: MessageGrants;
      /** Answers to servers' questions; absent: there are none to answer. */
      inputs?: InputService;
    } = {},
  ) {
    this.feedback = options.feedback ?? new FeedbackRecorder(store, noopObserver, logger);
  }

  private readonly feedback: FeedbackRecorder;

  /**
   * Whether the allowlists let this person talk to Butler here: the conversation's platform rules its workspaces
   * and channels; a person is let in by who they are, so on each platform involved (the conversation's, and the
   * writer's own: an API key's, for its task in a Slack channel) whose list names users, the person's identity
   * there must be on it. An API key of someone the Slack list leaves out cannot post into Slack for them.
   */
  isAllowed(message: Pick<InboundMessage, 'address' | 'user' | 'isDirect'>): boolean {
    const { address } = message;
    const place = this.access[address.platform];
    if (
      place &&
      !(
        allows(place.workspaces, address.workspace) &&
        (message.isDirect || allows(place.channels, address.channel))
      )
    )
      return false;
    const writer = onPlatform(message.user, address.platform);
    return [...new Set([writer.platform, address.platform])].every((platform) => {
      const users = this.access[platform]?.users;
      if (users === undefined || users.length === 0) return true;
      const there = this.people.on(writer, platform);
      return there !== undefined && users.includes(there.id);
    });
  }

  /** Whom a message of `user` counts toward: their person, however many identities they write from. */
  private senderKeyOf(user: ChatUser, address: ConversationAddress): string {
    return senderKey(this.people, onPlatform(user, address.platform), address.workspace);
  }

  async precheck(input: {
    address: ConversationAddress;
    user: ChatUser;
    dedupKey: string;
  }): Promise<'ok' | 'duplicate' | 'rate_limited'> {
    const { platform } = input.address;
    if (await this.store.inbox.exists(platform, input.dedupKey)) return 'duplicate';
    const limit = this.options.messagesPerMinute;
    if (limit === undefined) return 'ok';
    const sent = await this.store.inbox.messagesSince(
      this.senderKeyOf(input.user, input.address),
      new Date(Date.now() - 60_000),
    );
    return sent >= limit ? 'rate_limited' : 'ok';
  }

  /**
   * Takes a message into the inbox. `onStored` runs once it is stored and before this process's worker is
   * woken for it: what the caller shows of the message (the API's `user` event) comes before its turn's.
   */
  async accept(received: InboundMessage, onStored?: () => Promise<void>): Promise<AcceptResult> {
    const cleaned = this.withinLength(cleanJson(received));
    // Nothing of a message's own credential reaches the database unsealed.
    const message = this.options.grants ? this.options.grants.sealed(cleaned) : withoutGrant(cleaned);
    const log = this.logger.child({ platform: message.address.platform, eventId: message.eventId });
    if (!this.isAllowed(message)) {
      log.info(
        { channel: message.address.channel, user: message.user.id },
        'message outside the access allowlist ignored',
      );
      return { status: 'ignored', reason: 'not_allowed' };
    }
    // "stop" while Butler answers in the conversation stops that turn; with nothing running it is a message.
    if (stopWords.test(message.text.trim()) && (await this.stop(message)) === 'stopping') {
      log.info({ user: message.user.id }, 'stop asked by message');
      return { status: 'stopping' };
    }
    const storing = performance.now();
    const eventId = await this.store.inbox.insert({
      platform: message.address.platform,
      dedupKey: message.dedupKey,
      conversationKey: encodeConversationKey(message.address),
      userId: message.user.id,
      senderKey: this.senderKeyOf(message.user, message.address),
      payload: message,
    });
    this.options.admission?.noteStored(performance.now() - storing);
    if (eventId === undefined) {
      log.debug({ dedupKey: message.dedupKey }, 'duplicate delivery dropped');
      return { status: 'duplicate' };
    }
    await onStored?.();
    this.onWork();
    return { status: 'accepted', eventId };
  }

  /** The message with its text cut to the limit (on a grapheme boundary), noting how long it was. */
  private withinLength(message: InboundMessage): InboundMessage {
    const maxMessageChars = this.options.maxMessageChars ?? defaultMaxMessageChars;
    if (message.text.length <= maxMessageChars) return message;
    return {
      ...message,
      text: graphemePrefix(message.text, maxMessageChars),
      cutFrom: message.text.length,
    };
  }

  async answerInput(input: InputAnswerInput): Promise<InputAnswerResult> {
    if (!this.options.inputs)
      return { ok: false, reason: 'missing', message: 'There is no such question here.' };
    const result = await this.options.inputs.answer(cleanJson(input));
    if (result.ok && result.status === 'answered') this.onWork();
    return result;
  }

  async inputQuestion(
    input: Pick<InputAnswerInput, 'user' | 'inputId' | 'key'>,
  ): Promise<InputQuestionResult> {
    if (!this.options.inputs)
      return { ok: false, reason: 'missing', message: 'There is no such question here.' };
    return this.options.inputs.question(input);
  }

  decide(input: ApprovalDecisionInput): Promise<DecisionResult> {
    return this.approvals.decide(cleanJson(input));
  }

  approvalDetails(request: ApprovalDetailsRequest): Promise<ApprovalDetails | undefined> {
    return this.approvals.details(cleanJson(request));
  }

  mayDecide(
    ...[approval, user]: Parameters<ButlerIntake['mayDecide']>
  ): ReturnType<ButlerIntake['mayDecide']> {
    return this.approvals.permission(approval, user);
  }

  async workspaceRemoved(platform: Platform, workspace: string): Promise<void> {
    const prefix = workspaceKeyPrefix(platform, workspace);
    const paused = await this.store.schedules.pauseWhere(prefix, removedNote);
    const waiting = await this.store.approvals.pauseWhere(prefix);
    this.logger.info(
      { platform, workspace, paused, approvals: waiting },
      'Butler removed from a workspace: its scheduled tasks and pending approvals pause',
    );
  }

  async workspaceInstalled(platform: Platform, workspace: string): Promise<void> {
    const prefix = workspaceKeyPrefix(platform, workspace);
    const resumed = await this.store.schedules.resumeWhere(prefix, removedNote);
    const waiting = await this.store.approvals.resumeWhere(prefix);
    if (resumed + waiting > 0)
      this.logger.info(
        { platform, workspace, resumed, approvals: waiting },
        'Butler installed again: scheduled tasks and pending approvals resume',
      );
  }

  home(person: Person, workspace?: string): Promise<HomeView> {
    return readHome(
      this.store,
      this.approvals,
      this.options.capabilities ?? noCapabilities,
      person,
      workspace,
    );
  }

  async stop(input: {
    address: ConversationAddress;
    user: ChatUser;
    isDirect?: boolean;
  }): Promise<'stopping' | 'idle'> {
    const address = cleanJson(input.address);
    const { stops } = this.options;
    if (!stops || !this.isAllowed({ address, user: input.user, isDirect: input.isDirect ?? false }))
      return 'idle';
    const asked = await stops.request(
      encodeConversationKey(address),
      onPlatform(cleanJson(input.user), address.platform),
    );
    return asked ? 'stopping' : 'idle';
  }

  async shareFile(input: {
    address: ConversationAddress;
    user: ChatUser;
    file: FileBytes;
  }): Promise<InboundFile> {
    const address = cleanJson(input.address);
    const { files } = this.options;
    if (!files) throw new Error('Butler does not take files here');
    if (!this.isAllowed({ address, user: input.user, isDirect: false }))
      throw new NotAllowedError('The access rules do not let this person talk to Butler here.');
    return files.share({
      conversationKey: encodeConversationKey(address),
      platform: address.platform,
      uploader: onPlatform(cleanJson(input.user), address.platform),
      file: input.file,
    });
  }

  recordFeedback(input: FeedbackInput): Promise<FeedbackResult> {
    return this.feedback.record(input);
  }

  async isKnownConversation(address: ConversationAddress): Promise<boolean> {
    return (await this.store.conversations.find(encodeConversationKey(cleanJson(address)))) !== undefined;
  }
}
