/**
 * A scripted team-chat conversation with Butler, deterministic (seeded): people ask about incidents,
 * deploys, tickets and numbers; Butler answers at realistic length. Plus a stand-in for the compaction
 * model that writes a summary the way the instructions ask (terse bullets, identifiers kept, a word cap).
 */

/** Mulberry32: a small seeded generator, so every run sends the same conversation. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const people = ['Ana', 'Bilal', 'Chen', 'Dara'];
const services = ['payments-api', 'checkout', 'search-indexer', 'auth-gateway', 'billing-worker', 'ledger'];
const regions = ['eu-west-1', 'us-east-2', 'ap-southeast-1'];
const asks = [
  'can you summarize what changed in {service} since the last deploy?',
  'is {ticket} still blocking the {service} release, or did {person} unblock it?',
  'what was the p99 latency of {service} in {region} yesterday? I remember something like {number} ms.',
  'please draft a short status update for the incident channel about {ticket} on {service}.',
  'remind me which version of {service} is running in {region}; I think it is {version}.',
  'we agreed to roll back {service} to {version} if the error rate goes above {percent}%. Is it above that now?',
  'what did we decide about the on-call rotation for {service} next week?',
  'can you list the open follow-ups from {ticket} and who owns each one?',
  'how many pods does {service} run in {region}, and did autoscaling kick in during the spike at {time}?',
  'write a checklist for migrating {service} from {region} to {otherRegion} without downtime.',
];
const openers = ['Quick question:', 'Hey Butler,', 'Butler,', 'Follow-up:', 'One more thing,', ''];
const details = [
  'Customers in {region} reported timeouts around {time}.',
  'The dashboard shows {number} errors per minute at peak.',
  '{person} thinks it is related to the connection pool change in {version}.',
  'Finance needs this before the {day} review.',
  'Keep it short, this goes to the leadership channel.',
  'Ticket {ticket} has the logs attached.',
];
const replySentences = [
  'Looking at the deploy history, {service} moved from {version} to the current build on {day}, with {number} commits in between.',
  'The main changes were a retry policy for outbound calls, a smaller connection pool, and a fix for the cache key collision tracked in {ticket}.',
  'In {region}, p99 latency stayed around {number} ms until {time}, then climbed for roughly twenty minutes before recovering.',
  'Error rate peaked at {percent}% which is above the rollback threshold we agreed on, so a rollback to {version} is justified.',
  '{person} owns the follow-up on the alert thresholds; the runbook update is still open.',
  'Autoscaling added {small} pods at {time}; the new pods became ready after about ninety seconds.',
  'Here is a short status update: impact was limited to {region}, mitigation is in place, and a full review is scheduled for {day}.',
  'Open follow-ups: tighten the health check, add a dashboard panel for pool saturation, and document the rollback steps.',
  'I do not have access to live metrics, so please double-check the numbers against the dashboard before sharing them.',
  'For the migration, drain traffic gradually, keep both regions writable behind the feature flag, and verify replication lag stays under {small} seconds.',
  'The on-call rotation for {service} next week is {person} first, then {otherPerson}, as agreed in the planning thread.',
  'Nothing else in {ticket} looks blocking; the remaining items are cosmetic.',
];
const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function fill(template: string, random: () => number): string {
  const values: Record<string, () => string> = {
    service: () => pick(random, services),
    region: () => pick(random, regions),
    otherRegion: () => pick(random, regions),
    person: () => pick(random, people),
    otherPerson: () => pick(random, people),
    ticket: () => `INC-${4000 + Math.floor(random() * 900)}`,
    version: () =>
      `v${2 + Math.floor(random() * 3)}.${Math.floor(random() * 20)}.${Math.floor(random() * 10)}`,
    number: () => String(50 + Math.floor(random() * 900)),
    small: () => String(2 + Math.floor(random() * 12)),
    percent: () => (0.5 + random() * 4).toFixed(1),
    time: () =>
      `${String(8 + Math.floor(random() * 12)).padStart(2, '0')}:${String(Math.floor(random() * 60)).padStart(2, '0')} UTC`,
    day: () => pick(random, days),
  };
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => values[name]?.() ?? name);
}

export interface ScriptedTurn {
  author: string;
  text: string;
  reply: string;
}

/** The conversation: each turn a person's message and the reply the (fake) model will give. */
export function scriptConversation(turns: number, seed = 42): ScriptedTurn[] {
  const random = seededRandom(seed);
  const script: ScriptedTurn[] = [];
  for (let index = 0; index < turns; index++) {
    const detailCount = Math.floor(random() * 3);
    const text = [
      pick(random, openers),
      fill(pick(random, asks), random),
      ...Array.from({ length: detailCount }, () => fill(pick(random, details), random)),
    ]
      .filter(Boolean)
      .join(' ');
    const sentences = 2 + Math.floor(random() * 6);
    const reply = Array.from({ length: sentences }, () => fill(pick(random, replySentences), random)).join(
      ' ',
    );
    script.push({ author: pick(random, people), text, reply });
  }
  return script;
}

/**
 * The compaction model's stand-in: merges the previous summary's bullets with one terse bullet per
 * folded message (identifiers and numbers kept, filler dropped), then keeps the newest bullets within
 * the word limit the instructions give, as a model asked for "at most N words" would.
 */
export function fakeSummary(request: string, wordLimit: number): string {
  const previous = /Previous summary:\n([\s\S]*?)\n\nNew messages:/.exec(request)?.[1] ?? '';
  const transcript = request.split('\n\nNew messages:\n')[1] ?? '';
  const bullets = previous
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
  for (const line of transcript.split('\n')) {
    const match = /^\[([^\]]+)\]\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, who = '', said = ''] = match;
    const words = said
      .replace(/^(Quick question:|Hey Butler,|Butler,|Follow-up:|One more thing,)\s*/, '')
      .split(/\s+/);
    bullets.push(
      `${who === 'Butler' ? 'Butler' : who}: ${words.slice(0, who === 'Butler' ? 14 : 12).join(' ')}`,
    );
  }
  const kept: string[] = [];
  let words = 1;
  for (const bullet of bullets.reverse()) {
    const size = bullet.split(/\s+/).length + 1;
    if (words + size > wordLimit) break;
    kept.unshift(bullet);
    words += size;
  }
  return `Facts\n${kept.map((bullet) => `- ${bullet}`).join('\n')}`;
}
