/**
 * Typed errors with a stable `code`, so edges can map them to protocol answers
 * (VerificationError → 401, PayloadError → 400, PayloadTooLargeError → 413).
 */
export class ButlerError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export interface ConfigIssue {
  /** The environment variable or config-file path at fault, e.g. `SLACK_SIGNING_SECRET` or `tools[0].risk`. */
  variable: string;
  message: string;
}

/** Bad configuration: names every bad variable at once, so one start-up attempt shows them all. */
export class ConfigError extends ButlerError {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(
      'config_invalid',
      `Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`,
    );
    this.issues = issues;
  }
}

/** An inbound request whose signature, timestamp or token does not check out. */
export class VerificationError extends ButlerError {
  constructor(message: string) {
    super('verification_failed', message);
  }
}

/** Someone the access allowlists leave out asked for something (e.g. to share a file). */
export class NotAllowedError extends ButlerError {
  constructor(message: string) {
    super('not_allowed', message);
  }
}

/** An inbound request that is not what the protocol promises (bad JSON, missing fields). */
export class PayloadError extends ButlerError {
  constructor(message: string) {
    super('payload_invalid', message);
  }
}

export class PayloadTooLargeError extends ButlerError {
  constructor(limitBytes: number) {
    super('payload_too_large', `Request body exceeds ${limitBytes} bytes`);
  }
}

/** A model call that failed for good (after retries); `userMessage` is safe to show in chat. */
export class ModelError extends ButlerError {
  readonly userMessage: string;

  constructor(code: string, message: string, userMessage: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.userMessage = userMessage;
  }
}

/**
 * A database statement that failed. Its message names what Butler was doing and the database's error
 * code, never the statement's parameters: those hold message text and tool arguments.
 */
export class StorageError extends ButlerError {
  readonly operation: string;
  /** The SQLSTATE (`22021`, `57P01`) or the driver's error code (`ECONNREFUSED`), when known. */
  readonly sqlState: string | undefined;

  constructor(operation: string, sqlState: string | undefined, reason: string) {
    super('storage_failed', `Database ${operation} failed${sqlState ? ` (${sqlState})` : ''}: ${reason}`);
    this.operation = operation;
    this.sqlState = sqlState;
  }
}

/** The message of anything thrown, for a person or a log line. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The network's own reason a request failed (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`), found along the
 * error's causes (`cause`, and `original` where an SDK keeps the error it wrapped there); else the innermost
 * message.
 */
export function networkReason(error: unknown): string {
  let reason = errorText(error);
  for (let cause: unknown = error; cause instanceof Error; ) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `${code}: ${cause.message}`;
    reason = cause.message || reason;
    cause = cause.cause ?? (cause as { original?: unknown }).original;
  }
  return reason;
}
