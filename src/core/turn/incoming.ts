import {
  type ChatUser,
  type InboundMessage,
  onPlatform,
  type ThreadContextMessage,
} from '../contracts/events.js';
import type { ConversationMessage } from '../contracts/messages.js';
import { distinctPeople, type People } from '../contracts/people.js';
import { type FileBudget, fileLines, newFileBudget, type ReceivedFiles } from '../files/index.js';
import { cleanJson } from '../text/index.js';
import type { Turn, TurnRunnerDeps } from './turn.js';

/**
 * A turn's new messages as the conversation stores them: prepared by the adapter (names, thread context),
 * with the files they share fetched and described, and the notice the reply opens with when Butler cut a
 * message or left part of a file out; and the people they come from.
 */

/**
 * Each person once, as they last wrote (whichever of their identities: a task their API key scheduled and
 * their own Slack message are one person), in the order they last wrote (the last is whom the reply answers).
 */
export function requestersOf(people: People, messages: readonly InboundMessage[]): ChatUser[] {
  const latestFirst = messages
    .map((message) => ({ ...onPlatform(message.user, message.address.platform), user: message.user }))
    .reverse();
  return distinctPeople(people, latestFirst)
    .map((each) => each.user)
    .reverse();
}

/**
 * The credential the platform gave with the newest message, when every message is one person's: a turn that
 * answers several people acts as none of them.
 */
export function grantOf(deps: TurnRunnerDeps, messages: readonly InboundMessage[]): string | undefined {
  const { grants, policy } = deps;
  if (!grants || requestersOf(policy.people, messages).length !== 1) return undefined;
  const newest = [...messages].reverse().find((message) => message.grant !== undefined);
  return newest ? grants.opened(newest) : undefined;
}

/** What the reply says first when the intake cut a message to its length limit. */
function cutNotice(messages: readonly InboundMessage[]): string | undefined {
  const cut = messages.filter((message) => message.cutFrom !== undefined);
  if (cut.length === 0) return undefined;
  const parts = cut.map(
    (message) =>
      `${message.text.length.toLocaleString('en-US')} of its ${(message.cutFrom ?? 0).toLocaleString('en-US')} characters`,
  );
  return `_That message was too long for me: I read only the first ${parts.join(', and ')}._`;
}

/** What the reply says first when files were cut or skipped. */
function filesNotice(notes: readonly string[]): string | undefined {
  if (notes.length === 0) return undefined;
  return `_About the files: ${notes.join('; ')}._`;
}

export async function incomingMessages(
  deps: TurnRunnerDeps,
  turn: Turn,
  messages: readonly InboundMessage[],
  emptyWindow: boolean,
): Promise<{ pending: ConversationMessage[]; notice: string | undefined }> {
  const isNew = emptyWindow && !turn.conversation.summary;
  const pending: ConversationMessage[] = [];
  const budget = newFileBudget();
  const notes: string[] = [];
  for (const [index, original] of messages.entries()) {
    let message = original;
    let threadContext: ThreadContextMessage[] = [];
    // A scheduled run's prompt and creator were read when the task was made: there is nothing to look up.
    if (turn.adapter.prepare && !original.schedule) {
      try {
        // Names and thread context come from the platform's API: the same cleaning as the intake's.
        const prepared = cleanJson(
          await turn.adapter.prepare(original, { newConversation: isNew && index === 0 }),
        );
        message = prepared.message;
        threadContext = prepared.threadContext ?? [];
      } catch (error) {
        turn.log.warn({ err: error }, 'could not prepare the message; using it as received');
      }
    }
    if (threadContext.length > 0) {
      const files = await receiveFiles(
        deps,
        turn,
        threadContext.flatMap((entry) => entry.files ?? []),
        budget,
      );
      notes.push(...files.notes);
      const lines = threadContext.map(
        (entry) => `${entry.fromButler ? 'Butler' : entry.user}: ${entry.text}`,
      );
      pending.push({
        role: 'user',
        content: withFiles(`(Earlier messages in this thread, for context)\n${lines.join('\n')}`, files),
        ...(files.mentions.length > 0 ? { files: files.mentions } : {}),
      });
    }
    // The names `prepare` found show on approval cards, not the bare platform ids; the time zone it found
    // is what "at 9" means to the person (a profile may give one without the other).
    const found = message.user.name !== undefined || message.user.timezone !== undefined;
    turn.requesters = turn.requesters.map((person) =>
      person.id === message.user.id && found ? { ...person, ...message.user } : person,
    );
    if (message.user.id === turn.requester.id && found)
      turn.requester = { ...turn.requester, ...message.user };
    const files = await receiveFiles(deps, turn, message.files ?? [], budget, message);
    notes.push(...files.notes);
    // A run's prompt says it came from a task, to the model and in the console, not from its creator now.
    const speaker = message.user.name ?? message.user.id;
    const author = original.schedule
      ? scheduledAuthor(original.schedule.name, speaker)
      : message.isDirect
        ? undefined
        : speaker;
    const text = message.cutFrom
      ? `${message.text}\n\n[Butler cut this message here: it had ${message.cutFrom} characters; the first ${message.text.length} are above.]`
      : message.text;
    pending.push({
      role: 'user',
      content: withFiles(text, files),
      ...(author ? { author } : {}),
      ...(files.mentions.length > 0 ? { files: files.mentions } : {}),
    });
  }
  const notices = [cutNotice(messages), filesNotice(notes)].filter((line) => line !== undefined);
  return { pending, notice: notices.length > 0 ? `${notices.join('\n')}\n\n` : undefined };
}

const scheduledAuthor = (task: string | undefined, creator: string) =>
  `scheduled task${task ? ` "${task}"` : ''}, set up by ${creator}`;

function withFiles(text: string, files: ReceivedFiles): string {
  const lines = fileLines(files.mentions, files.skipped);
  if (!lines) return text;
  return text ? `${text}\n${lines}` : lines;
}

async function receiveFiles(
  deps: TurnRunnerDeps,
  turn: Turn,
  files: NonNullable<InboundMessage['files']>,
  budget: FileBudget,
  sharedBy?: InboundMessage,
): Promise<ReceivedFiles> {
  if (files.length === 0 || !deps.files) return { mentions: [], notes: [], skipped: [] };
  return deps.files.intake.receive({
    adapter: turn.adapter,
    conversationKey: turn.conversation.key,
    workspace: turn.target.address.workspace,
    uploader: sharedBy ? onPlatform(sharedBy.user, sharedBy.address.platform) : null,
    files,
    budget,
    signal: turn.signal,
  });
}
