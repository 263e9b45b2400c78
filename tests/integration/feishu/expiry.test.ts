import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { buttonCount, requestRestart } from './approval-steps.js';
import { useFeishuButler } from './feishu-butler.js';

// 0.02 minutes: the approval expires about a second after the card is posted.
const suite = useFeishuButler({ config: { approvalTtlMinutes: 0.02 } });

describe('Feishu approval expiry through the running Butler', () => {
  it('patches the card to Expired, without buttons, and runs nothing', async () => {
    const pending = await requestRestart(suite);
    suite.model.setFallback({ text: 'The request expired; nothing was restarted.' });
    const patch = await waitFor(
      () => suite.fake.callsTo('PATCH', `/open-apis/im/v1/messages/${pending.cardMessageId}`)[0],
      10_000,
    );
    expect(patch.code).toBe(0);
    const card = suite.fake.messages.get(pending.cardMessageId)?.content;
    expect(JSON.stringify(card)).toContain('Expired');
    expect(buttonCount(card)).toBe(0);
    await suite.app.settle();
    expect(suite.tools.requests).toHaveLength(0);
  });
});
