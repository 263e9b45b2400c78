import { sql } from 'drizzle-orm';
import { inboundEvents } from '../../src/storage/schema.js';
import type { TestButler } from './butler-app.js';

/**
 * Text that platforms and models really produce and that Postgres refuses as it is: NUL, other C0
 * controls, half an emoji (an unpaired surrogate); plus text that must pass untouched (RTL, zero-width,
 * Slack's 40,000-character maximum). Each carries a marker no log line may contain.
 */
export interface HostileCase {
  name: string;
  marker: string;
  text: string;
  /** What Butler keeps and the model sees. */
  cleaned: string;
}

const highHalf = '\u{1F600}'.charAt(0);

function longText(marker: string): string {
  const filler = ' the quick brown fox jumps over the lazy dog';
  // Exactly 40,000 characters, ending in a full stop: platforms trim trailing spaces.
  return `${`${marker}${filler.repeat(Math.ceil(40_000 / filler.length))}`.slice(0, 39_999)}.`;
}

export function hostileCases(prefix: string): HostileCase[] {
  const marker = (name: string) => `${prefix}-${name}-7f3a`;
  const long = longText(marker('long'));
  return [
    {
      name: 'a NUL',
      marker: marker('nul'),
      text: `restart ${marker('nul')}\u0000 please`,
      cleaned: `restart ${marker('nul')} please`,
    },
    {
      name: 'an unpaired surrogate (half an emoji)',
      marker: marker('surrogate'),
      text: `half an emoji ${highHalf} ${marker('surrogate')}`,
      cleaned: `half an emoji \ufffd ${marker('surrogate')}`,
    },
    {
      name: 'C0 controls',
      marker: marker('controls'),
      text: `bell\u0007 escape\u001b[31m ${marker('controls')}\u0008 form\u000cfeed`,
      cleaned: `bell escape[31m ${marker('controls')} formfeed`,
    },
    {
      name: 'RTL and zero-width characters',
      marker: marker('rtl'),
      text: `مرحبا \u202e${marker('rtl')}\u202c zero\u200bwidth \u2066isolated\u2069`,
      cleaned: `مرحبا \u202e${marker('rtl')}\u202c zero\u200bwidth \u2066isolated\u2069`,
    },
    { name: '40,000 characters', marker: marker('long'), text: long, cleaned: long },
  ];
}

/** Until the returned function is called, the database refuses to store inbound events (an outage of writes). */
export async function refuseInboxWrites(app: TestButler): Promise<() => Promise<void>> {
  const { db } = app.butler.database;
  await db.execute(sql`create or replace function butler_test_refuse_write() returns trigger
    language plpgsql as $$ begin raise exception 'database unavailable'; end $$`);
  await db.execute(sql`create trigger butler_test_refuse_write before insert on ${inboundEvents}
    for each statement execute function butler_test_refuse_write()`);
  return async () => {
    await db.execute(sql`drop trigger butler_test_refuse_write on ${inboundEvents}`);
  };
}
