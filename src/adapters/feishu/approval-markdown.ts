import {
  type ApprovalCardCall,
  argumentsShown,
  moreCharacters,
  outcomeLine,
} from '../../core/contracts/approval-card.js';
import type { ChatUser } from '../../core/contracts/events.js';
import { graphemePrefix, joinNames, truncateText } from '../../core/text/index.js';
import { defuseMentions } from './mentions.js';

/** Text pieces of the Feishu approval card: card markdown that names users, tools, agents and outcomes safely. */

/**
 * Escapes text for the markdown element with the numeric entities the card markdown documents, so names and
 * reasons cannot inject card tags (`<at id=all>`) or stray emphasis.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[<>*_~`[\]]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** `<at>` renders the user's current name; fall back to the escaped id when it is not an open_id. */
export function userMarkdown(user: ChatUser): string {
  if (user.name) return escapeMarkdown(user.name);
  return /^[A-Za-z0-9_-]+$/.test(user.id) ? `<at id=${user.id}></at>` : escapeMarkdown(user.id);
}

/** The tool's name as code, then where it comes from: `delete_record` (MCP server records). */
export function toolMarkdown(call: ApprovalCardCall): string {
  const origin = call.origin?.kind === 'mcp' ? call.origin : undefined;
  const name = `\`${(origin?.tool ?? call.toolName).replace(/`/g, "'")}\``;
  return origin ? `${name} (MCP server ${escapeMarkdown(origin.server)})` : name;
}

/** Agent names are short identifiers from configuration; a long one is cut so every call keeps its room. */
const agentNameLimit = 40;

/** "Ana", "Ana and Bo": everyone a card's calls were asked for. */
export function requestersMarkdown(requesters: readonly ChatUser[]): string {
  return joinNames(requesters.map(userMarkdown));
}

/** "Asked by the **ops** agent for Alice" for a call Butler delegated; undefined for Butler's own calls. */
export function agentMarkdown(call: ApprovalCardCall, requesters: readonly ChatUser[]): string | undefined {
  if (!call.agent) return undefined;
  const agent = escapeMarkdown(truncateText(call.agent, agentNameLimit));
  return `Asked by the **${agent}** agent for ${requestersMarkdown(requesters)}`;
}

/**
 * Plain text for the card's summary (what chat lists and notifications show): "asked by the ops agent",
 * "some asked by the ops and docs agents" when Butler asked for others itself; undefined for Butler's own.
 */
export function askedByAgents(calls: readonly ApprovalCardCall[]): string | undefined {
  const agents = [
    ...new Set(calls.flatMap((call) => (call.agent ? [truncateText(call.agent, agentNameLimit)] : []))),
  ];
  const last = agents.pop();
  if (last === undefined) return undefined;
  const names = agents.length > 0 ? `${agents.join(', ')} and ${last} agents` : `${last} agent`;
  return `${calls.some((call) => !call.agent) ? 'some ' : ''}asked by the ${names}`;
}

/**
 * Text as a JSON code block; every run of backticks is broken so the text cannot close the block, and an
 * `<at>` tag stays text (Feishu reads it as a mention even in code).
 */
export function codeMarkdown(text: string): string {
  return `\`\`\`json\n${defuseMentions(text.replace(/`(?=`)/g, '`\u200b'))}\n\`\`\``;
}

/**
 * A call's arguments as a JSON code block, cut to `limit` characters to fit the card, saying exactly how many
 * characters of the stored arguments it left out.
 */
export function argumentsMarkdown(call: ApprovalCardCall, limit: number): string {
  const { text } = argumentsShown(call);
  const shown = graphemePrefix(text, limit);
  const more = call.argumentsLength - shown.length;
  if (more <= 0) return codeMarkdown(shown);
  return `${codeMarkdown(`${shown}…`)}\n*… (${moreCharacters(more)})*`;
}

/** Whether `argumentsMarkdown` leaves anything of the call's arguments out at `limit`. */
export function argumentsCut(call: ApprovalCardCall, limit: number): boolean {
  return call.argumentsCut || limit < call.argumentsJson.length;
}

/** The core's outcome line, with the decider as a mention and the reason unable to inject markdown. */
export function outcomeMarkdown(call: ApprovalCardCall): string | undefined {
  return outcomeLine({
    ...call,
    ...(call.decidedBy ? { decidedBy: { id: call.decidedBy.id, name: userMarkdown(call.decidedBy) } } : {}),
    ...(call.reason ? { reason: escapeMarkdown(call.reason) } : {}),
  });
}
