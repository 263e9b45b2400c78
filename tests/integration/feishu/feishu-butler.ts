import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { FakeFeishuApi, type FakeFeishuOptions, type FakeMessage } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { serviceTools, startPlatformButler } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
} from '../../unit/feishu/feishu-events.js';

export const approverOpenId = 'ou_approver000000000000000000000009';

export interface FeishuButlerOptions {
  /** Extra environment, e.g. FEISHU_CONNECTION=websocket. */
  env?: Record<string, string>;
  /** Extra config-file entries, e.g. approvalTtlMinutes. */
  config?: Record<string, unknown>;
  /** Log at this level into `logDestination` instead of staying silent (tests that check what is logged). */
  logLevel?: string;
  logDestination?: NodeJS.WritableStream;
}

/** The whole Butler with Feishu over signed, encrypted webhooks; its Open API is the fake, its model the fake model. */
export function startFeishuButler(
  fake: FakeFeishuApi,
  model: FakeModelServer,
  tools?: ToolServer,
  options: FeishuButlerOptions = {},
) {
  return startPlatformButler('feishu', {
    env: {
      FEISHU_APP_ID: testAppId,
      FEISHU_APP_SECRET: testAppSecret,
      FEISHU_ENCRYPT_KEY: testEncryptKey,
      FEISHU_VERIFICATION_TOKEN: testVerificationToken,
      FEISHU_DOMAIN: fake.baseUrl,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      ...options.env,
    },
    config: { approvers: { feishu: [approverOpenId] }, tools: serviceTools(tools), ...options.config },
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
  });
}

export interface FeishuSuite {
  fake: FakeFeishuApi;
  model: FakeModelServer;
  tools: ToolServer;
  app: TestButler;
  /** The webhook URL, `…/feishu/events`. */
  url: string;
}

/**
 * Registers a test file's hooks: a fake Feishu Open API, a fake model, a tool endpoint and a running Butler for
 * the file, with the recordings cleared before each test. `prepare` runs on the fake before Butler starts.
 */
export function useFeishuButler(
  options: FeishuButlerOptions & { prepare?: (fake: FakeFeishuApi) => void; fake?: FakeFeishuOptions } = {},
): FeishuSuite {
  const suite = {} as FeishuSuite;
  beforeAll(async () => {
    suite.fake = await FakeFeishuApi.start(options.fake);
    options.prepare?.(suite.fake);
    suite.model = await startFakeModelServer();
    suite.tools = await startToolServer();
    suite.app = await startFeishuButler(suite.fake, suite.model, suite.tools, options);
    suite.url = `${suite.app.url}/feishu/events`;
  });
  afterAll(async () => {
    await suite.app?.close();
    await suite.model?.close();
    await suite.tools?.close();
    await suite.fake?.close();
  });
  beforeEach(() => {
    suite.fake.restore();
    suite.model.reset();
    suite.tools.requests.length = 0;
  });
  return suite;
}

/** Messages the bot sent in reply to `messageId`. */
export function repliesTo(fake: FakeFeishuApi, messageId: string): FakeMessage[] {
  return fake.sentMessages().filter((message) => message.replyTo === messageId);
}
