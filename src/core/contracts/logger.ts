/**
 * The logging surface the core needs. pino's Logger satisfies it; tests can pass a silent one.
 * Log objects carry ids (`conversation`, `eventId`, `approvalId`, `platform`), never model content or secrets.
 */
export interface LogFunction {
  (message: string): void;
  (fields: Record<string, unknown>, message?: string): void;
}

export interface Logger {
  error: LogFunction;
  warn: LogFunction;
  info: LogFunction;
  debug: LogFunction;
  child(bindings: Record<string, unknown>): Logger;
}

const ignore: LogFunction = () => {};

export const silentLogger: Logger = {
  error: ignore,
  warn: ignore,
  info: ignore,
  debug: ignore,
  child: () => silentLogger,
};
