import { describe, expect, it } from 'vitest';
import { createLarkLogger } from '../../../src/adapters/feishu/lark-logger.js';
import { recordingLogger } from '../../helpers/recording-logger.js';

describe('Lark SDK logger adapter', () => {
  it('keeps codes and statuses but never request bodies, headers or tokens', () => {
    const { calls: lines, logger } = recordingLogger();
    const larkLogger = createLarkLogger(logger);
    // What the SDK's LoggerProxy passes for a failed call: one array holding formatErrors(error).
    larkLogger.error([
      [
        {
          message: 'Request failed with status code 400',
          config: {
            data: '{"content":"the user\'s private question"}',
            headers: { Authorization: 'Bearer t-secret' },
          },
          response: { status: 400, data: { code: 99991400, msg: 'request trigger frequency limit' } },
        },
        { code: 99991400, msg: 'request trigger frequency limit' },
      ],
    ]);
    larkLogger.warn(['[ws]', 'reconnect']);
    larkLogger.info(['client ready']);
    larkLogger.debug(['receive message, data: {"text":"private"}']);
    const logged = JSON.stringify(lines);
    expect(logged).toContain('99991400');
    expect(logged).toContain('Request failed with status code 400');
    expect(logged).not.toContain('private');
    expect(logged).not.toContain('t-secret');
    expect(lines.map((line) => line.level)).toEqual(['error', 'warn', 'debug']);
  });
});
