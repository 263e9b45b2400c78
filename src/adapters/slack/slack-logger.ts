import { LogLevel, type Logger as SlackSdkLogger } from '@slack/web-api';
import type { Logger } from '../../core/contracts/logger.js';

/**
 * Routes Bolt's and the Web API client's logs into ours. Only strings and error messages pass:
 * SDK debug output can carry request bodies (message text), so debug is dropped and objects are
 * never serialized.
 */
export function toSlackSdkLogger(logger: Logger): SlackSdkLogger {
  let level = LogLevel.WARN;
  const describe = (parts: unknown[]) =>
    parts
      .map((part) => (typeof part === 'string' ? part : part instanceof Error ? part.message : ''))
      .filter(Boolean)
      .join(' ');
  return {
    debug: () => {},
    info: (...parts: unknown[]) => logger.debug({ platform: 'slack', source: 'slack-sdk' }, describe(parts)),
    warn: (...parts: unknown[]) => logger.warn({ platform: 'slack', source: 'slack-sdk' }, describe(parts)),
    error: (...parts: unknown[]) => logger.error({ platform: 'slack', source: 'slack-sdk' }, describe(parts)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
