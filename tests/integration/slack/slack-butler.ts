import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { TestButler, TestButlerOptions } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { serviceTools, startPlatformButler } from '../../helpers/platform-butler.js';
import type { ToolServer } from '../../helpers/tool-server.js';
import { botUserId, signingSecret } from '../../unit/slack/payloads.js';

/** The whole Butler with Slack over HTTP, its Web API pointed at the fake, its model at the fake model. */
export function startSlackButler(
  fake: FakeSlackApi,
  model: FakeModelServer,
  tools?: ToolServer,
  options: Omit<TestButlerOptions, 'env' | 'config'> & {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
  } = {},
) {
  return startPlatformButler('slack', {
    ...options,
    env: {
      SLACK_BOT_TOKEN: 'xoxb-integration',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: fake.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      ...options.env,
    },
    config: { approvers: { slack: ['U0APPROVER'] }, tools: serviceTools(tools), ...options.config },
  });
}

let sequence = 0;

/** A fresh Slack `ts` near now (Butler skips messages older than maxMessageAgeMinutes). */
export function freshTs(): string {
  sequence += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(100000 + sequence).padStart(6, '0')}`;
}

export { botUserId };

export interface SlackSuite {
  fake: FakeSlackApi;
  model: FakeModelServer;
  app: TestButler;
  /** The events URL, `…/slack/events`. */
  url: string;
}

/**
 * Registers a test file's hooks: a fake Slack Web API, a fake model and a running Butler for the file, with the
 * recordings cleared before each test. `prepare` runs on the fake before Butler starts.
 */
export function useSlackButler(
  options: { config?: Record<string, unknown>; prepare?: (fake: FakeSlackApi) => void } = {},
): SlackSuite {
  const suite = {} as SlackSuite;
  beforeAll(async () => {
    suite.fake = await startFakeSlackApi();
    options.prepare?.(suite.fake);
    suite.model = await startFakeModelServer();
    suite.app = await startSlackButler(suite.fake, suite.model, undefined, {
      ...(options.config ? { config: options.config } : {}),
    });
    suite.url = `${suite.app.url}/slack/events`;
  });
  afterAll(async () => {
    await suite.app?.close();
    await suite.model?.close();
    await suite.fake?.close();
  });
  beforeEach(() => {
    suite.fake.reset();
    suite.model.reset();
  });
  return suite;
}
