import { describe, expect, it } from 'vitest';
import { contactScopeHint } from '../../../src/adapters/feishu/user-names.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { lastUserContent } from '../../helpers/platform-butler.js';
import { aliceOpenId, bobOpenId, messageEvent, postToButler } from '../../unit/feishu/feishu-events.js';
import { useFeishuButler } from './feishu-butler.js';

/** An app without the optional contact scopes: Butler still answers, shows open_ids, and says why once. */

const logs = captureLogs();
const suite = useFeishuButler({
  logLevel: 'info',
  logDestination: logs.stream,
  prepare: (fake) => {
    fake.contactScopeMissing = true;
    fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen' });
  },
});

describe('Feishu without the contact scope', () => {
  it('keeps the open_id as the speaker and logs one hint naming the scope', async () => {
    await postToButler(suite.url, messageEvent({ text: '@_user_1 how is payments?' }));
    await suite.app.settle();
    await postToButler(suite.url, messageEvent({ text: '@_user_1 and search?', senderOpenId: bobOpenId }));
    await suite.app.settle();

    expect(lastUserContent(suite.model, 0)).toBe(`${aliceOpenId}: how is payments?`);
    expect(lastUserContent(suite.model, 1)).toBe(`${bobOpenId}: and search?`);
    const warnings = logs.warnings();
    expect(warnings.map((line) => line.msg)).toEqual([contactScopeHint]);
    expect(warnings[0]?.msg).toContain('contact:user.base:readonly');
    // Asked once; after a missing-scope answer Butler stops asking for a while.
    expect(suite.fake.callsTo('GET', /^\/open-apis\/contact\/v3\/users\//)).toHaveLength(1);
    expect(suite.fake.sentMessages()).toHaveLength(2);
  });
});
