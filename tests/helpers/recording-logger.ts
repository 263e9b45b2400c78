import type { Logger } from '../../src/core/contracts/logger.js';

/**
 * A Logger that keeps what it is given, in order: `lines` each line's level and message (the fields when a line
 * has no message), `calls` each line's level, fields and message as passed.
 */
export function recordingLogger() {
  const lines: Array<{ level: string; message: unknown }> = [];
  const calls: Array<{ level: string; fields: unknown; message: unknown }> = [];
  const at = (level: string) => (fields: unknown, message?: unknown) => {
    lines.push({ level, message: message ?? fields });
    calls.push({ level, fields, message });
  };
  const logger: Logger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: () => logger,
  };
  return { lines, calls, logger };
}
