import type { FeishuConfig } from '../../config/index.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { FeishuDispatcher } from './dispatcher.js';
import type { FeishuSdk } from './feishu-api.js';
import { createWsClient } from './lark-http.js';

/** What the long connection is doing, as the SDK's callbacks report it. */
export type ConnectionState = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'stopped';

export type ConnectionEvent = 'start' | 'ready' | 'reconnecting' | 'reconnected' | 'error' | 'stop';

const transitions: Record<ConnectionEvent, (state: ConnectionState) => ConnectionState> = {
  start: () => 'connecting',
  ready: (state) => (state === 'stopped' ? state : 'connected'),
  reconnected: (state) => (state === 'stopped' ? state : 'connected'),
  reconnecting: (state) => (state === 'stopped' ? state : 'reconnecting'),
  error: (state) => (state === 'stopped' ? state : 'failed'),
  stop: () => 'stopped',
};

export function nextConnectionState(state: ConnectionState, event: ConnectionEvent): ConnectionState {
  return transitions[event](state);
}

/** `ok`, or a short reason for /readyz. */
export function connectionReadiness(state: ConnectionState, failure: string | undefined): string {
  if (state === 'connected') return 'ok';
  if (state === 'failed') return `Feishu long connection failed${failure ? `: ${failure}` : ''}`;
  return `Feishu long connection ${state}`;
}

/** The SDK's WSClient silently refuses to start with an app id of another shape. */
const appIdPattern = /^cli_[0-9a-fA-F]{16}$/;

export interface LongConnection {
  start(): Promise<void>;
  stop(): void;
  readiness(): string;
  state(): ConnectionState;
}

export interface LongConnectionOptions {
  sdk: FeishuSdk;
  config: FeishuConfig;
  dispatcher: FeishuDispatcher;
  logger: Logger;
}

/**
 * Events and card callbacks over the SDK's WebSocket client: no public URL needed. The SDK reconnects on its own
 * (server-given interval plus jitter); readiness follows its callbacks.
 */
export function createLongConnection(options: LongConnectionOptions): LongConnection {
  const { logger } = options;
  let state: ConnectionState = 'idle';
  let failure: string | undefined;
  const move = (event: ConnectionEvent) => {
    const next = nextConnectionState(state, event);
    if (next !== state) logger.info({ from: state, to: next }, 'Feishu long connection state');
    state = next;
  };
  const client = createWsClient(options.sdk, options.config, {
    onReady: () => move('ready'),
    onReconnecting: () => move('reconnecting'),
    onReconnected: () => move('reconnected'),
    onError: (error) => {
      failure = error.message;
      move('error');
    },
  });

  return {
    async start() {
      if (!appIdPattern.test(options.config.appId)) {
        failure = `${options.config.appId} is not an app id the long connection takes (cli_ followed by 16 hex digits)`;
        state = 'failed';
        logger.error(failure);
        return;
      }
      move('start');
      await client.start({ eventDispatcher: options.dispatcher.eventDispatcher });
    },
    stop() {
      move('stop');
      client.close({ force: true });
    },
    readiness: () => connectionReadiness(state, failure),
    state: () => state,
  };
}
