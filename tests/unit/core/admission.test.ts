import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Admission } from '../../../src/core/inbox/admission.js';

/**
 * The worker's admission: past its floor, a turn starts only while deliveries store fast and the loop keeps up.
 * Each check comes a fraction of a sample period after the sample it reads, and long before the next.
 */
describe('admission of new turns', () => {
  let admission: Admission | undefined;
  afterEach(() => admission?.stop());

  it('holds new turns past the floor while storing deliveries is slow, and lets them go once it is fast again', async () => {
    admission = new Admission({ floor: 8, maxLagMs: 60_000, maxStoreMs: 50, sampleMs: 1_000 });
    admission.start();
    expect(admission.admits(200)).toBe(true);
    admission.noteStored(120);
    await sleep(1_200);
    expect(admission.admits(8)).toBe(false);
    // The floor always runs: answers progress however slow the database is.
    expect(admission.admits(7)).toBe(true);
    admission.noteStored(3);
    await sleep(1_200);
    expect(admission.admits(200)).toBe(true);
  });

  it('holds new turns past the floor after the event loop was blocked', async () => {
    admission = new Admission({ floor: 2, maxLagMs: 50, maxStoreMs: 60_000, sampleMs: 1_000 });
    admission.start();
    await sleep(50);
    const blockedUntil = Date.now() + 200;
    while (Date.now() < blockedUntil) {
      // A synchronous stretch, as a burst of turns' work would hold the loop.
    }
    await sleep(1_000);
    expect(admission.admits(2)).toBe(false);
    expect(admission.admits(1)).toBe(true);
  });
});
