import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { attachmentsCharacterLimit } from '../../../src/adapters/slack/attachments.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { lastUserContent, storedEvents } from '../../helpers/platform-butler.js';
import {
  asJson,
  directMessage,
  envelope,
  fieldsAttachment,
  postToSlack,
  sharedAttachment,
  slackbotNotice,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

/** What people forward and paste into Butler's DM, through Bolt and the running Butler (issue 12). */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model);
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

const send = (event: Record<string, unknown>) => postToSlack(slackUrl, asJson(envelope(event)));

describe('Slack: forwarded messages and attachments through the running Butler', () => {
  it('gives the model a forwarded message with its author and channel, names resolved', async () => {
    fake.users.set('U0CAROL', { name: 'carol', displayName: 'Carol' });
    const forwarded = sharedAttachment({
      text: 'payments p99 is above 2s since the deploy, <@U0CAROL> is looking',
      authorName: 'Bob',
      channelName: 'incidents',
    });
    const response = await send({
      ...directMessage({ ts: freshTs(), text: 'what does this mean?' }),
      attachments: [forwarded],
    });
    expect(response.status).toBe(200);
    await app.settle();

    const content = lastUserContent(model, 0);
    expect(content).toMatch(/^what does this mean\?\n\n\[Forwarded message from Bob in #incidents \(https:/);
    expect(content).toContain('> payments p99 is above 2s since the deploy, @Carol is looking');
  });

  it('reads a forward sent without any comment', async () => {
    await send({
      ...directMessage({ ts: freshTs(), text: '' }),
      blocks: [],
      attachments: [sharedAttachment({ text: 'db failover at 10:02', authorName: 'Dana' })],
    });
    await app.settle();
    expect(lastUserContent(model, 0)).toMatch(
      /^\[Forwarded message from Dana in #incidents .*\]\n> db failover/,
    );
  });

  it("gives the model a bot attachment's table, bounded in size", async () => {
    const longText = `${'line of a very long report\n'.repeat(1000)}END-OF-REPORT`;
    await send({
      ...directMessage({ ts: freshTs(), text: 'summarise these' }),
      attachments: [fieldsAttachment(), { ...fieldsAttachment(), text: longText }],
    });
    await app.settle();
    const content = lastUserContent(model, 0);
    expect(content).toContain('> Service: payments\n> Checks: 3 of 4 passed');
    expect(content).toContain('…(truncated)');
    expect(content).not.toContain('END-OF-REPORT');
    expect(content.length).toBeLessThan('summarise these\n\n'.length + attachmentsCharacterLimit + 1);
  });

  it("ignores Slackbot's system notices in Butler's DM and stores nothing", async () => {
    const before = await storedEvents(app);
    const response = await send(
      slackbotNotice({ ts: freshTs(), text: '<@U0ALICE> archived the channel #old-deploys' }),
    );
    expect(response.status).toBe(200);
    await app.settle();
    expect(await storedEvents(app)).toBe(before);
    expect(model.requests).toHaveLength(0);
    expect(fake.callsTo('chat.startStream')).toHaveLength(0);
  });
});
