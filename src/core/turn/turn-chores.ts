import { postMissingForms, remindInputs } from './input-park.js';
import { lapseOrphanQuestions } from './live-question.js';
import type { TurnRunnerDeps } from './turn.js';
import { postMissingCards } from './turn-endings.js';

/** The timed work the sweep does for turns: lost cards and forms posted, reminders sent, orphaned questions ended. */
export class TurnChores {
  constructor(private readonly deps: TurnRunnerDeps) {}

  /** Posts the cards of batches, and the forms of questions, that a crash kept from being shown. */
  async postMissingCards(olderThan: Date): Promise<void> {
    await postMissingCards(this.deps, olderThan);
    await postMissingForms(this.deps, olderThan);
  }

  /** Reminds the requesters of questions open since before `before`, once each. */
  remindInputs(before: Date): Promise<void> {
    return remindInputs(this.deps, before);
  }

  /** Ends the live questions whose process is gone, telling their people. */
  lapseOrphanQuestions(): Promise<number> {
    return lapseOrphanQuestions(this.deps);
  }
}
