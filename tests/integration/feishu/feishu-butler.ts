import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { inboundEvents } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { FakeFeishuApi, type FakeMessage } from '../../helpers/fake-feishu-api.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
} from '../../unit/feishu/feishu-events.js';

export const approverOpenId = 'ou_approver000000000000000000000009';

/** The whole Butler with Feishu over signed, encrypted webhooks; its Open API is the fake, its model the fake model. */
export interface FeishuButlerOptions {
  /** Extra environment, e.g. FEISHU_CONNECTION=websocket. */
  env?: Record<string, string>;
  /** Extra config-file entries, e.g. approvalTtlMinutes. */
  config?: Record<string, unknown>;
}

export async function startFeishuButler(
  fake: FakeFeishuApi,
  model: FakeModelServer,
  tools?: ToolServer,
  options: FeishuButlerOptions = {},
) {
  const tool = (name: string, risk: string) => ({
    name,
    description: `${name.replace('_', ' ')} of a production service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    http: { method: 'POST', url: `${tools?.url ?? 'http://127.0.0.1:9'}/${name}` },
  });
  const app = await startTestButler({
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
    config: {
      approvers: { feishu: [approverOpenId] },
      tools: [tool('restart_service', 'high'), tool('scale_service', 'medium')],
      ...options.config,
    },
  });
  if (!app.butler.connectors.some((connector) => connector.adapter.platform === 'feishu')) {
    await app.close();
    throw new Error(
      'Feishu is not wired: src/platform-connectors.ts must add createFeishuConnector when config.feishu is set',
    );
  }
  return app;
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
  options: FeishuButlerOptions & { prepare?: (fake: FakeFeishuApi) => void } = {},
): FeishuSuite {
  const suite = {} as FeishuSuite;
  beforeAll(async () => {
    suite.fake = await FakeFeishuApi.start();
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

export async function storedEvents(app: TestButler): Promise<number> {
  const [row] = await app.butler.database.db
    .select({ count: sql<number>`count(*)::int` })
    .from(inboundEvents);
  return row?.count ?? 0;
}

/** The last user message of a model request, as the model saw it. */
export function lastUserContent(model: FakeModelServer, index: number): string {
  const messages = model.requests[index]?.messages ?? [];
  return String(messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');
}

/** Messages the bot sent in reply to `messageId`. */
export function repliesTo(fake: FakeFeishuApi, messageId: string): FakeMessage[] {
  return fake.sentMessages().filter((message) => message.replyTo === messageId);
}

export async function waitFor<T>(probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
