import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { messageEvent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { repliesTo, startFeishuButler } from '../feishu/feishu-butler.js';
import { byAgent, delegating } from './agent-fixtures.js';

/** Delegation on Feishu: the streamed reply card says which agent is busy, then holds Butler's answer. */

let fake: FakeFeishuApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
  model = await startFakeModelServer();
  app = await startFeishuButler(fake, model, undefined, {
    config: {
      agents: [
        { name: 'docs', description: 'Answers from the handbook.', instructions: 'You know the handbook.' },
      ],
    },
  });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});

describe(`delegation on Feishu (${databaseKind})`, () => {
  it('streams "Asking docs…" into the reply card while the agent works, then the answer', async () => {
    let shownWhileAgentRan = '';
    model.enqueue(delegating(['docs', 'Where is the on-call rota?']), { text: 'The rota is in the wiki.' });
    // The agent's model answers only once the card shows the progress line (or after 3 s without it).
    model.enqueueFor(byAgent('docs'), async () => {
      const shown = () => {
        const card = fake.sentMessages().at(-1);
        return card ? fake.visibleText(card.messageId) : '';
      };
      const deadline = Date.now() + 3_000;
      while (!shown().includes('Asking') && Date.now() < deadline) await delay(20);
      shownWhileAgentRan = shown();
      return { text: 'Wiki: On-call rota page.' };
    });
    const messageId = uniqueId('om_');
    const response = await postToButler(
      `${app.url}/feishu/events`,
      messageEvent({ messageId, threadId: uniqueId('omt_'), text: '@_user_1 where is the on-call rota?' }),
    );
    expect(response.status).toBe(200);
    await app.settle();

    expect(shownWhileAgentRan).toContain('Asking docs…');
    const replies = repliesTo(fake, messageId);
    expect(replies).toHaveLength(1);
    expect(fake.visibleText(replies[0]?.messageId as string)).toContain('The rota is in the wiki.');
  });
});
