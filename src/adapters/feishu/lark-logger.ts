import * as lark from '@larksuiteoapi/node-sdk';
import type { Logger } from '../../core/contracts/logger.js';
import { truncateText } from '../../core/text/index.js';
import { asRecord, recordField } from './fields.js';

/**
 * Routes the Lark SDK's logs to our Logger. SDK logger methods receive one array argument, and its error
 * objects carry request bodies (message text) and configs: keep only messages, statuses and Feishu codes.
 */

const textLimit = 300;

function describe(value: unknown): unknown {
  if (typeof value === 'string') return truncateText(value, textLimit + 1);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return value;
  const record = asRecord(value);
  if (!record) return Array.isArray(value) ? value.map(describe) : typeof value;
  const response = recordField(record, 'response');
  const body = recordField(response, 'data');
  return {
    message: typeof record.message === 'string' ? describe(record.message) : undefined,
    status: response?.status,
    code: body?.code ?? record.code,
    msg: body?.msg ?? record.msg,
  };
}

function summarize(args: unknown[]): unknown[] {
  const flat = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  return flat.map(describe);
}

/** `quiet`: everything at debug, for calls whose failures the caller expects and reports itself. */
export function createLarkLogger(logger: Logger, options: { quiet?: boolean } = {}): lark.Logger {
  const sdk = logger.child({ component: 'lark-sdk' });
  if (options.quiet) {
    const debug = (...args: unknown[]) => sdk.debug({ lark: summarize(args) }, 'Lark SDK');
    return { error: debug, warn: debug, info: debug, debug: () => {}, trace: () => {} };
  }
  return {
    error: (...args: unknown[]) => sdk.error({ lark: summarize(args) }, 'Lark SDK error'),
    warn: (...args: unknown[]) => sdk.warn({ lark: summarize(args) }, 'Lark SDK warning'),
    // The SDK logs "client ready" and similar at info; they are debug noise for us.
    info: (...args: unknown[]) => sdk.debug({ lark: summarize(args) }, 'Lark SDK'),
    debug: () => {},
    trace: () => {},
  };
}

/** `info` so our logger decides what to keep: `fatal` (0) falls back to info inside the SDK anyway. */
export const larkLoggerLevel = lark.LoggerLevel.info;
