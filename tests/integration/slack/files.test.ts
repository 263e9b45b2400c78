import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  startFakeModelServer,
  userParts,
} from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { makePdf, makePng, sampleCsv } from '../../helpers/sample-files.js';
import { appMention, asJson, envelope, postToSlack } from '../../unit/slack/payloads.js';
import { botUserId, freshTs, startSlackButler } from './slack-butler.js';

/** Files and images through Bolt and the running Butler: shared ones read, made ones uploaded (issue 24). */

let fake: FakeSlackApi;
let model: FakeModelServer;
let app: TestButler;

beforeAll(async () => {
  fake = await startFakeSlackApi({ botToken: 'xoxb-integration' });
  model = await startFakeModelServer();
  app = await startSlackButler(fake, model);
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

const send = (event: Record<string, unknown>) =>
  postToSlack(`${app.url}/slack/events`, asJson(envelope(event)));
const parts = (request: RecordedRequest | undefined) => (request ? userParts(request) : []);

describe('Slack files through the running Butler', () => {
  it('shows the model a screenshot and a PDF shared with a mention, each downloaded once', async () => {
    const screenshot = fake.files.add({
      name: 'screenshot.png',
      mimetype: 'image/png',
      bytes: await makePng(800, 600),
    });
    const pdf = fake.files.add({
      name: 'runbook.pdf',
      mimetype: 'application/pdf',
      bytes: await makePdf(['Runbook: restart the ingest worker with care']),
    });
    model.enqueue({ text: 'The graph shows a spike; the runbook says restart carefully.' });
    const ts = freshTs();
    const response = await send({
      ...appMention({ ts, text: `<@${botUserId}> what do these say?` }),
      files: [screenshot, pdf],
    });
    expect(response.status).toBe(200);
    await app.settle();

    const seen = parts(model.requests[0]);
    expect(seen.filter((part) => part.type === 'image_url').map((part) => part.url.slice(0, 23))).toEqual([
      'data:image/jpeg;base64,',
    ]);
    expect(seen.map((part) => (part.type === 'text' ? part.text : '')).join('\n')).toContain(
      'Runbook: restart the ingest worker with care',
    );
    expect(fake.files.downloads(String(screenshot.id))).toBe(1);
    expect(fake.files.downloads(String(pdf.id))).toBe(1);

    // Slack delivers the same message again (a retry): nothing is downloaded twice.
    await send({
      ...appMention({ ts, text: `<@${botUserId}> what do these say?` }),
      files: [screenshot, pdf],
    });
    await app.settle();
    expect(fake.files.downloads(String(screenshot.id))).toBe(1);
  });

  it('uploads the CSV the model writes into the thread it answers', async () => {
    model.enqueue(
      {
        toolCalls: [
          {
            id: 'call_csv',
            name: 'attach_file',
            arguments: JSON.stringify({ filename: 'errors.csv', content: sampleCsv }),
          },
        ],
      },
      { text: 'Attached the errors as a CSV.' },
    );
    const ts = freshTs();
    await send(appMention({ ts, text: `<@${botUserId}> send me the errors as a CSV` }));
    await app.settle();
    expect(fake.files.uploads.map((upload) => [upload.filename, upload.channel, upload.threadTs])).toEqual([
      ['errors.csv', 'C0GENERAL', ts],
    ]);
    expect(fake.files.uploads[0]?.bytes.toString('utf8')).toBe(sampleCsv);
  });
});
