import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { startTestButler } from '../../helpers/butler-app.js';
import { startFakeModelServer } from '../../helpers/fake-model-server.js';
import { startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { appMention, asJson, envelope, postToSlack, signingSecret } from '../../unit/slack/payloads.js';
import { freshTs } from '../slack/slack-butler.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += String(chunk);
  });
  return { stream, text: () => text };
}

describe('secrets stay out of logs', () => {
  it('redacts secret-named fields at any of the first two levels', () => {
    const output = capture();
    const logger = createLogger({ level: 'debug', serviceName: 'test', destination: output.stream });
    logger.info(
      {
        token: 'xoxb-top',
        config: { signingSecret: 'sig', apiKey: 'sk-nested' },
        headers: { authorization: 'Bearer b' },
      },
      'x',
    );
    expect(output.text()).not.toMatch(/xoxb-top|"sig"|sk-nested|Bearer b/);
    expect(output.text()).toContain('[redacted]');
  });

  it('never writes a configured secret while serving Slack at debug level, through failures too', async () => {
    const secrets = {
      SLACK_BOT_TOKEN: 'xoxb-very-secret-bot-token',
      BUTLER_API_TOKEN: 'sk-very-secret-model-key',
      LANGFUSE_SECRET_KEY: 'sk-lf-very-secret',
    };
    const slack = await startFakeSlackApi();
    const model = await startFakeModelServer();
    const output = capture();
    const app = await startTestButler({
      env: {
        ...secrets,
        SLACK_SIGNING_SECRET: signingSecret,
        SLACK_API_URL: slack.url,
        BUTLER_BASE_URL: model.baseUrl,
        BUTLER_MODEL: 'test-model',
        LANGFUSE_ENABLED: 'true',
        LANGFUSE_PUBLIC_KEY: 'pk-lf-public',
        LANGFUSE_BASE_URL: 'http://127.0.0.1:9',
      },
      logLevel: 'debug',
      logDestination: output.stream,
    });
    try {
      const url = `${app.url}/slack/events`;
      model.enqueue({ text: 'fine' }, { status: 401 }, { status: 401 }, { status: 401 });
      expect((await postToSlack(url, asJson(envelope(appMention({ ts: freshTs() }))))).status).toBe(200);
      expect((await postToSlack(url, asJson(envelope(appMention({ ts: freshTs() }))))).status).toBe(200);
      expect(
        (await postToSlack(url, asJson(envelope(appMention({ ts: freshTs() }))), { secret: 'wrong' })).status,
      ).toBe(401);
      await app.settle();
    } finally {
      await app.close();
      await slack.close();
      await model.close();
    }
    const logs = output.text();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toContain('turn failed');
    for (const secret of [...Object.values(secrets), signingSecret]) expect(logs).not.toContain(secret);
  });
});
