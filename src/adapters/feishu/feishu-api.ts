import * as lark from '@larksuiteoapi/node-sdk';
import type { FeishuConfig } from '../../config/index.js';
import type { Logger } from '../../core/contracts/logger.js';
import { type CallObserver, type LaneSpec, Pacer, type RunOptions } from '../pacing/index.js';
import { checkedCall } from './feishu-api-error.js';
import type { FeishuApi } from './feishu-api-types.js';
import { noRetries } from './feishu-lanes.js';
import type { JsonRecord } from './fields.js';
import { httpInstanceWithTimeout } from './lark-http.js';
import { createLarkLogger, larkLoggerLevel } from './lark-logger.js';
import { tenantCalls } from './tenant-calls.js';

/**
 * The one place that talks to Feishu (with tenant-calls.ts, the calls themselves): the Lark SDK Client wired to
 * the configured domain, with responses checked (`code === 0`) and errors turned into FeishuApiError. Everything
 * else sees `FeishuApi`.
 */

export interface FeishuApiOptions {
  config: FeishuConfig;
  logger: Logger;
  requestTimeoutMilliseconds?: number;
  /** Hears each call's outcome by operation (metrics). */
  onCall?: CallObserver | undefined;
  /** This process's part of the app's budgets (pacing/pacer.ts); all of them by default. */
  share?: (() => number) | undefined;
  /** Where a store app's ticket and tenant tokens are kept (shared by every process); in memory by default. */
  cache?: lark.Cache | undefined;
}

const defaultRequestTimeoutMilliseconds = 15_000;

export interface FeishuSdk {
  /** A self-built app's calls. */
  api: FeishuApi;
  /** A store app's calls for one tenant, with that tenant's token (the caller keeps them: each call makes new ones). */
  apiFor(tenantKey: string): FeishuApi;
  larkLogger: lark.Logger;
  httpInstance: lark.HttpInstance;
}

export function createFeishuApi(options: FeishuApiOptions): FeishuSdk {
  const { config } = options;
  const larkLogger = createLarkLogger(options.logger);
  const httpInstance = httpInstanceWithTimeout(
    options.requestTimeoutMilliseconds ?? defaultRequestTimeoutMilliseconds,
  );
  // Our own token cache: the SDK's default one is shared by every Client in the process.
  const cache = options.cache ?? new lark.DefaultCache();
  const clientFor = (logger: lark.Logger) =>
    new lark.Client({
      appId: config.appId,
      appSecret: config.appSecret,
      appType: config.type === 'isv' ? lark.AppType.ISV : lark.AppType.SelfBuild,
      domain: config.baseUrl,
      logger,
      loggerLevel: larkLoggerLevel,
      httpInstance,
      cache,
    });
  const client = clientFor(larkLogger);
  // Name and topic lookups fail routinely (optional scope not granted, people outside the contact range) and the
  // caller handles that; the SDK would log each one as an error. Same token cache, so no extra token request.
  // Made at its first use: a store app's Client asks Feishu for a ticket as it is made, if none is kept yet.
  let quiet: lark.Client | undefined;
  const quietClient = () => {
    quiet ??= clientFor(createLarkLogger(options.logger, { quiet: true }));
    return quiet;
  };
  const pacer = new Pacer({ onCall: options.onCall, share: options.share });
  type Request = () => Promise<unknown>;
  const paced = (lanes: readonly LaneSpec[], request: Request) => ({ lanes, request });
  /** Every call goes through the pacing layer (which counts it); only a `paced` one waits for its lanes. */
  const call = <T>(
    operation: string,
    request: Request | ReturnType<typeof paced>,
    read: (body: JsonRecord) => T,
    runOptions: RunOptions = {},
  ): Promise<T> => {
    const { lanes, request: send } = typeof request === 'function' ? { lanes: [], request } : request;
    return pacer.run(operation, lanes, () => checkedCall(operation, send, read), noRetries, runOptions);
  };
  /**
   * The calls as one tenant's: a store app's carry the tenant's key, so the SDK uses that tenant's token, and
   * are paced on the tenant's lanes (Feishu counts a store app's calls per tenant); a self-built app's are its own.
   */
  const tenantApi = (tenantKey: string | undefined): FeishuApi =>
    tenantCalls({ config, client, quietClient, pacer, call, paced, tenantKey });
  return { api: tenantApi(undefined), apiFor: tenantApi, larkLogger, httpInstance };
}
