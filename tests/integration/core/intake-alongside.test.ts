import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { databaseKind } from '../../helpers/database.js';
import { inboundMessage } from '../../helpers/messages.js';

/**
 * What a channel writes with an accepted message (the HTTP API's stream event of it) is stored in the message's
 * own transaction: nothing can take the message up before it is there, and a message whose event could not be
 * written is not taken (the caller hears the error; a retry takes it whole).
 */

let core: CoreIntake;
beforeAll(async () => {
  core = await startCoreIntake();
});
afterAll(async () => {
  await core.close();
});
beforeEach(async () => {
  await core.reset();
});

describe(`a message and what goes with it, on ${databaseKind}`, () => {
  it('are stored together, or not at all', async () => {
    const message = inboundMessage({ text: 'deploy status?' });
    const key = encodeConversationKey(message.address);
    const event = { type: 'message' as const, role: 'user' as const, content: message.text };

    await expect(
      core.intake.accept(message, async (tx) => {
        await tx.conversationEvents.append(key, [event]);
        throw new Error('the stream could not take it');
      }),
    ).rejects.toThrow('the stream could not take it');
    expect(await core.storedMessages()).toEqual([]);
    expect(await core.store.conversationEvents.lastId(key)).toBe(0);

    const accepted = await core.intake.accept(message, (tx) =>
      tx.conversationEvents.append(key, [event]).then(() => undefined),
    );
    expect(accepted.status).toBe('accepted');
    expect((await core.storedMessages()).map((stored) => stored.text)).toEqual(['deploy status?']);
    expect((await core.store.conversationEvents.listAfter(key, 0, 10)).map((stored) => stored.event)).toEqual(
      [event],
    );

    // A repeat is not stored again, and writes nothing alongside.
    let wrote = false;
    const repeat = await core.intake.accept(message, async () => {
      wrote = true;
    });
    expect(repeat.status).toBe('duplicate');
    expect(wrote).toBe(false);
  });
});
