import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { InboundMessage } from '../contracts/events.js';
import type { DueDecision, NewInboxEvent, ScheduleRecord } from '../contracts/store.js';
import { dueSlots, nextSlot } from './timing.js';

/**
 * What a due task's slot becomes. After downtime a cron task has several slots behind it: only the latest
 * may run, and only within the grace window; the rest are recorded as missed. A run is an inbox message
 * whose dedup key is its slot, so a second insert of the same slot is dropped there too.
 */

/** The inbox message that runs a task's slot: its prompt, written by its creator, in its conversation. */
export function runMessage(schedule: ScheduleRecord, slot: Date): InboundMessage {
  const id = `schedule:${schedule.id}:${slot.toISOString()}`;
  const address = decodeConversationKey(schedule.conversationKey);
  // The run asks as its creator, compared as that person wherever it runs: an API key's task in a Slack
  // channel is the key's, so the key is its requester and never its approver.
  const { platform, ...creator } = schedule.creator;
  const user = platform === address.platform ? creator : { ...creator, platform };
  return {
    kind: 'message',
    address,
    messageId: id,
    eventId: id,
    dedupKey: id,
    user,
    text: schedule.prompt,
    // A run is addressed to Butler, like a mention, wherever it runs.
    isMention: true,
    isDirect: schedule.isDirect,
    sentAt: slot.toISOString(),
    schedule: {
      id: schedule.id,
      slot: slot.toISOString(),
      ...(schedule.anchor ? { anchor: schedule.anchor } : {}),
      ...(schedule.name ? { name: schedule.name } : {}),
    },
  };
}

/** The run as inbox work; `senderKey` is its creator's person: a run counts as one of their messages. */
export function runEvent(schedule: ScheduleRecord, slot: Date, senderKey: string): NewInboxEvent {
  const message = runMessage(schedule, slot);
  return {
    platform: message.address.platform,
    dedupKey: message.dedupKey,
    conversationKey: schedule.conversationKey,
    userId: schedule.creator.id,
    senderKey,
    payload: message,
  };
}

export function decideDue(
  schedule: ScheduleRecord,
  now: Date,
  graceMs: number,
  senderKey: string,
): DueDecision {
  const due = schedule.nextRunAt ?? now;
  const slots = schedule.cron ? dueSlots(schedule.cron, schedule.timezone, due, now) : [due];
  const slot = slots.at(-1) ?? due;
  const next = schedule.cron
    ? nextSlot(schedule.cron, schedule.timezone, new Date(Math.max(now.getTime(), slot.getTime())))
    : null;
  const inTime = now.getTime() - slot.getTime() <= graceMs;
  return {
    slot,
    missed: slots.slice(0, -1),
    next,
    ...(inTime ? { event: runEvent(schedule, slot, senderKey) } : {}),
  };
}
