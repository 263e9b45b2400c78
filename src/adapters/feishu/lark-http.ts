import * as lark from '@larksuiteoapi/node-sdk';
import type { FeishuConfig } from '../../config/index.js';
import { larkLoggerLevel } from './lark-logger.js';

/** The Lark SDK's plumbing: its HTTP instance with a timeout, and its long-connection client. */

/** The SDK's axios instance with a timeout: without one a stalled Feishu call would hang a reply forever. */
export function httpInstanceWithTimeout(timeout: number): lark.HttpInstance {
  const base = lark.defaultHttpInstance;
  return {
    request: (options) => base.request({ timeout, ...options }),
    get: (url, options) => base.get(url, { timeout, ...options }),
    delete: (url, options) => base.delete(url, { timeout, ...options }),
    head: (url, options) => base.head(url, { timeout, ...options }),
    options: (url, options) => base.options(url, { timeout, ...options }),
    post: (url, data, options) => base.post(url, data, { timeout, ...options }),
    put: (url, data, options) => base.put(url, data, { timeout, ...options }),
    patch: (url, data, options) => base.patch(url, data, { timeout, ...options }),
  } as lark.HttpInstance;
}

export interface LongConnectionCallbacks {
  onReady: () => void;
  onReconnecting: () => void;
  onReconnected: () => void;
  onError: (error: Error) => void;
}

/** The SDK's long-connection client; it reconnects by itself with the server-given interval and jitter. */
export function createWsClient(
  sdk: { larkLogger: lark.Logger; httpInstance: lark.HttpInstance },
  config: FeishuConfig,
  callbacks: LongConnectionCallbacks,
): lark.WSClient {
  return new lark.WSClient({
    appId: config.appId,
    appSecret: config.appSecret,
    domain: config.baseUrl,
    logger: sdk.larkLogger,
    loggerLevel: larkLoggerLevel,
    httpInstance: sdk.httpInstance,
    autoReconnect: true,
    handshakeTimeoutMs: 10_000,
    ...callbacks,
  });
}
