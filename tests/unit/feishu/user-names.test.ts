import { describe, expect, it } from 'vitest';
import {
  contactScopeHint,
  FeishuUserNames,
  prepareFeishuMessage,
} from '../../../src/adapters/feishu/user-names.js';
import type { InboundMessage } from '../../../src/core/contracts/events.js';
import { feishuClientFor, useFakeFeishu } from '../../helpers/feishu-client.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { aliceOpenId, bobOpenId, testTenantKey } from './feishu-events.js';

/** FeishuUserNames through the real Lark SDK client against the fake Open API. */

const feishu = useFakeFeishu((fake) => {
  fake.contactUsers.clear();
  fake.contactScopeMissing = false;
  fake.restore();
});

/** These messages forward nothing; a call would mean prepare read a history it should not. */
async function noForward(): Promise<string> {
  throw new Error('no forwarded history expected');
}

function setup() {
  const clock = { now: 1_000_000 };
  const { lines, logger } = recordingLogger();
  const api = feishuClientFor(feishu.fake, logger);
  const names = new FeishuUserNames(api, logger, () => clock.now);
  return {
    names,
    lines,
    clock,
    lookups: () => feishu.fake.callsTo('GET', /^\/open-apis\/contact\/v3\/users\//),
  };
}

function groupMessage(text: string, userId = aliceOpenId): InboundMessage {
  return {
    kind: 'message',
    address: { platform: 'feishu', workspace: testTenantKey, channel: 'oc_team', thread: 'om_1' },
    messageId: 'om_1',
    eventId: 'ev_1',
    dedupKey: 'om_1',
    user: { id: userId },
    text,
    isMention: true,
    isDirect: false,
    sentAt: new Date(0).toISOString(),
  };
}

describe('Feishu user names', () => {
  it('names the sender and people mentioned by open_id, asking the contact API once per person', async () => {
    const { names, lookups } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen' });
    feishu.fake.contactUsers.set(bobOpenId, { name: 'Bob Li' });
    const prepared = await prepareFeishuMessage(
      names,
      groupMessage(`ask @${bobOpenId} and @${bobOpenId}`),
      noForward,
    );
    expect(prepared.message.user).toEqual({ id: aliceOpenId, name: 'Alice Chen' });
    expect(prepared.message.text).toBe('ask @Bob Li and @Bob Li');
    await prepareFeishuMessage(names, groupMessage('again'), noForward);
    expect(lookups().map((call) => [call.path, call.query.user_id_type])).toEqual([
      [`/open-apis/contact/v3/users/${bobOpenId}`, 'open_id'],
      [`/open-apis/contact/v3/users/${aliceOpenId}`, 'open_id'],
    ]);
  });

  it("gives the sender's profile time zone, in direct chats too, from the same answer as the name", async () => {
    const { names, lookups } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen', timeZone: 'Asia/Shanghai' });
    const direct = { ...groupMessage('hi'), isDirect: true };
    const prepared = await prepareFeishuMessage(names, direct, noForward);
    expect(prepared.message.user).toEqual({ id: aliceOpenId, name: 'Alice Chen', timezone: 'Asia/Shanghai' });
    await prepareFeishuMessage(names, groupMessage('and here'), noForward);
    expect(lookups()).toHaveLength(1);
  });

  it('leaves out a time zone that is not an IANA name, and keeps the one the event named', async () => {
    const { names } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice', timeZone: 'GMT+8 Beijing' });
    const prepared = await prepareFeishuMessage(names, groupMessage('hi'), noForward);
    expect(prepared.message.user).toEqual({ id: aliceOpenId, name: 'Alice' });
    feishu.fake.contactUsers.set(bobOpenId, { name: 'Robert', timeZone: 'Europe/London' });
    const named = await prepareFeishuMessage(
      names,
      { ...groupMessage('hi', bobOpenId), user: { id: bobOpenId, name: 'Bob' } },
      noForward,
    );
    expect(named.message.user).toEqual({ id: bobOpenId, name: 'Bob', timezone: 'Europe/London' });
  });

  it('asks again after an hour', async () => {
    const { names, clock, lookups } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice' });
    await names.get(testTenantKey, aliceOpenId);
    clock.now += 30 * 60_000;
    await names.get(testTenantKey, aliceOpenId);
    expect(lookups()).toHaveLength(1);
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen' });
    clock.now += 31 * 60_000;
    expect(await names.get(testTenantKey, aliceOpenId)).toBe('Alice Chen');
  });

  it('keeps the open_id when the scope is missing, hints once, and stops asking for a while', async () => {
    const { names, lines, clock, lookups } = setup();
    feishu.fake.contactScopeMissing = true;
    const prepared = await prepareFeishuMessage(names, groupMessage(`cc @${bobOpenId}`), noForward);
    expect(prepared.message.user).toEqual({ id: aliceOpenId });
    expect(prepared.message.text).toBe(`cc @${bobOpenId}`);
    await prepareFeishuMessage(names, groupMessage('more', bobOpenId), noForward);
    expect(lookups()).toHaveLength(1);
    const hints = lines.filter((line) => line.level === 'warn');
    expect(hints).toEqual([{ level: 'warn', message: contactScopeHint }]);
    expect(contactScopeHint).toContain('contact:user.base:readonly');

    // Granted later: names appear after the recheck interval, without a restart or a second hint.
    feishu.fake.contactScopeMissing = false;
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice' });
    clock.now += 11 * 60_000;
    expect(await names.get(testTenantKey, aliceOpenId)).toBe('Alice');
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });

  it('hints once when the answer has no name (only the field scope is missing)', async () => {
    const { names, lines } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: undefined });
    feishu.fake.contactUsers.set(bobOpenId, { name: undefined });
    expect(await names.get(testTenantKey, aliceOpenId)).toBeUndefined();
    expect(await names.get(testTenantKey, bobOpenId)).toBeUndefined();
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      { level: 'warn', message: contactScopeHint },
    ]);
  });

  it('tolerates other failures quietly and retries them after a few minutes', async () => {
    const { names, lines, clock, lookups } = setup();
    feishu.fake.fail({ path: /^\/open-apis\/contact\//, status: 500, code: 1, msg: 'boom' });
    expect(await names.get(testTenantKey, aliceOpenId)).toBeUndefined();
    expect(await names.get(testTenantKey, bobOpenId)).toBeUndefined(); // outside the contact range
    expect(await names.get(testTenantKey, aliceOpenId)).toBeUndefined();
    expect(lookups()).toHaveLength(2);
    expect(lines.filter((line) => line.level !== 'debug')).toEqual([]);
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice' });
    clock.now += 6 * 60_000;
    expect(await names.get(testTenantKey, aliceOpenId)).toBe('Alice');
  });

  it('keeps names apart per tenant', async () => {
    const { names, lookups } = setup();
    feishu.fake.contactUsers.set(aliceOpenId, { name: 'Alice' });
    await names.get('tenant_a', aliceOpenId);
    await names.get('tenant_b', aliceOpenId);
    expect(lookups()).toHaveLength(2);
  });
});
