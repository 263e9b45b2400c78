import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createFeishuApi } from '../../src/adapters/feishu/feishu-api.js';
import type { FeishuApi } from '../../src/adapters/feishu/feishu-api-types.js';
import type { CallObserver } from '../../src/adapters/pacing/index.js';
import { type Logger, silentLogger } from '../../src/core/contracts/logger.js';
import { testAppId, testAppSecret } from '../unit/feishu/feishu-events.js';
import { FakeFeishuApi } from './fake-feishu-api.js';

/** Butler's Feishu client (the real Lark SDK) pointed at the fake Open API, for tests of what it asks. */
export function feishuClientFor(
  fake: FakeFeishuApi,
  logger: Logger = silentLogger,
  onCall?: CallObserver,
): FeishuApi {
  return createFeishuApi({
    config: {
      appId: testAppId,
      appSecret: testAppSecret,
      baseUrl: fake.baseUrl,
      encryptKey: undefined,
      verificationToken: 'token',
      connection: 'webhook',
      type: 'self_built',
    },
    logger,
    requestTimeoutMilliseconds: 2_000,
    onCall,
  }).api;
}

/**
 * One fake Open API for a test file: started before its tests and closed after them; before each test its
 * recorded calls are cleared and `reset` runs.
 */
export function useFakeFeishu(reset: (fake: FakeFeishuApi) => void = () => {}): {
  readonly fake: FakeFeishuApi;
} {
  let fake: FakeFeishuApi | undefined;
  const started = () => {
    if (!fake) throw new Error('the fake Feishu API starts in beforeAll');
    return fake;
  };
  beforeAll(async () => {
    fake = await FakeFeishuApi.start();
  });
  afterAll(() => fake?.close());
  beforeEach(() => {
    started().calls.length = 0;
    reset(started());
  });
  return {
    get fake() {
      return started();
    },
  };
}
