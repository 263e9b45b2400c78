import { asc, gt, lt, max } from 'drizzle-orm';
import type { Logger } from '../core/contracts/logger.js';
import { busEvents } from './bus-schema.js';
import type { Database } from './database.js';
import type { EventTransport } from './event-transport.js';

/** How often a process reads new events, and how far back it looks for rows that committed late. */
const pollMs = 250;
const lookBackIds = 200;
const readLimit = 500;
/** Rows older than this are deleted, at most every `pruneEveryMs`. */
const keepMs = 10 * 60_000;
const pruneEveryMs = 60_000;

/**
 * Events through a table, for a database LISTEN cannot reach (a transaction pooler hands each statement to
 * any server connection, so a LISTEN lands on one that is soon someone else's). `send` inserts a row; every
 * process reads the rows after the last it saw, a few times a second: slower than NOTIFY, never silent. Ids
 * may commit out of order, so each read looks back `lookBackIds` and skips what it delivered already.
 */
export function tableTransport(db: Database, logger: Logger): EventTransport {
  let timer: NodeJS.Timeout | undefined;
  let lastPruned = 0;
  let reading: Promise<void> | undefined;
  return {
    async send(payload) {
      await db.insert(busEvents).values({ payload });
    },
    async listen(receive) {
      let floor = 0;
      /** Rows there before this process listened are not its news. */
      let start = 0;
      const delivered = new Set<number>();
      try {
        const [row] = await db.select({ newest: max(busEvents.id) }).from(busEvents);
        floor = Number(row?.newest ?? 0);
        start = floor;
      } catch (error) {
        logger.warn({ err: error }, 'reading events failed; retrying');
      }
      const read = async () => {
        const rows = await db
          .select({ id: busEvents.id, payload: busEvents.payload })
          .from(busEvents)
          .where(gt(busEvents.id, Math.max(0, floor - lookBackIds)))
          .orderBy(asc(busEvents.id))
          .limit(readLimit);
        for (const row of rows) {
          if (row.id <= start || row.id <= floor - lookBackIds || delivered.has(row.id)) continue;
          delivered.add(row.id);
          receive(row.payload);
        }
        const newest = rows.at(-1)?.id;
        if (newest !== undefined && newest > floor) floor = newest;
        for (const id of delivered) if (id <= floor - lookBackIds) delivered.delete(id);
        const now = Date.now();
        if (now - lastPruned > pruneEveryMs) {
          lastPruned = now;
          await db.delete(busEvents).where(lt(busEvents.createdAt, new Date(now - keepMs)));
        }
      };
      timer = setInterval(() => {
        reading ??= read()
          .catch((error: unknown) => logger.debug({ err: error }, 'reading events failed'))
          .finally(() => {
            reading = undefined;
          });
      }, pollMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await reading;
    },
  };
}
