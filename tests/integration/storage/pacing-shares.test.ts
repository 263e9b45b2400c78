import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PacingShares } from '../../../src/app/pacing-shares.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { waitForAsync } from '../../helpers/wait-for.js';

/**
 * Processes serving one workspace split its platform budgets: each paces to one over the processes alive that
 * pace it (a heartbeat in the database), and takes its part back when the others stop.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe('pacing shares', () => {
  it('splits a budget between the processes alive that pace it, and gives it back when one stops', async () => {
    const first = new PacingShares(database, silentLogger);
    const second = new PacingShares(database, silentLogger);
    const third = new PacingShares(database, silentLogger);
    try {
      expect(first.shareOf('slack:T1')).toBe(1);
      if (database.kind === 'pglite') {
        // The embedded database is one process's: nobody to share with.
        second.shareOf('slack:T1');
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(first.shareOf('slack:T1')).toBe(1);
        return;
      }
      second.shareOf('slack:T1');
      // Another workspace's processes take nothing of this one's.
      third.shareOf('slack:T2');
      // Each naming starts a heartbeat; the second's may read the roster before the first's is written, so read
      // again (as the next heartbeat would) until both are seen.
      await waitForAsync(async () => {
        await second.refresh();
        return second.shareOf('slack:T1') === 0.5 || undefined;
      });
      await first.refresh();
      expect(first.shareOf('slack:T1')).toBe(0.5);
      expect(third.shareOf('slack:T2')).toBe(1);
      await second.stop();
      await first.refresh();
      expect(first.shareOf('slack:T1')).toBe(1);
    } finally {
      await Promise.all([first.stop(), second.stop(), third.stop()]);
    }
  });
});
