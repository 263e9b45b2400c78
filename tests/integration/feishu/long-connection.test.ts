import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { FakeLongConnection } from '../../unit/feishu/fake-long-connection.js';
import { cardActionEvent, messageEvent, uniqueId } from '../../unit/feishu/feishu-events.js';
import { approverOpenId, repliesTo, useFeishuButler } from './feishu-butler.js';

let gateway: FakeLongConnection | undefined;
const suite = useFeishuButler({
  env: { FEISHU_CONNECTION: 'websocket', FEISHU_ENCRYPT_KEY: '', FEISHU_VERIFICATION_TOKEN: '' },
  prepare: (fake) => {
    gateway = new FakeLongConnection(fake);
  },
});
afterAll(() => gateway?.close());

describe('Feishu over the long connection through the running Butler', () => {
  it('answers a mention delivered over the WebSocket, with no webhook route mounted', async () => {
    const connection = gateway as FakeLongConnection;
    await waitFor(() => connection.current);
    const webhook = await fetch(suite.url, { method: 'POST', body: '{}' });
    expect(webhook.status).toBe(404);

    suite.model.enqueue({ text: 'Hello over the long connection.' });
    const messageId = uniqueId('om_');
    const answer = await connection.push(messageEvent({ messageId, text: '@_user_1 hi' }));
    expect(answer.code).toBe(200);
    await suite.app.settle();
    const [reply] = repliesTo(suite.fake, messageId);
    expect(suite.fake.visibleText(reply?.messageId as string)).toBe('Hello over the long connection.');
  });

  it('answers a card click in the response frame', async () => {
    const connection = gateway as FakeLongConnection;
    await waitFor(() => connection.current);
    const answer = await connection.push(
      cardActionEvent({
        operatorOpenId: approverOpenId,
        value: { approval_id: 'appr_unknown', decision: 'approve' },
      }),
    );
    expect(answer.data).toMatchObject({ toast: { type: 'error' } });
  });
});
