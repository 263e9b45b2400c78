import { ButlerError } from '../../core/contracts/errors.js';
import { asRecord, type JsonRecord, recordField, stringField } from './fields.js';

/** Feishu's documented throttling answers: HTTP 429, app rate limit 99991400, message rate limit 230020. */
const rateLimitCodes = new Set([99991400, 230020]);

/**
 * "Access denied. One of the following scopes is required: […]": the app lacks the scope the call needs
 * (open.feishu.cn trouble-shooting "how-to-fix-the-99991672-error"; answered with HTTP 400).
 */
export const scopeMissingCode = 99991672;

export class FeishuApiError extends ButlerError {
  readonly feishuCode: number | undefined;
  readonly httpStatus: number | undefined;

  /** `explanation`, when given, follows the status in the message: what a person can do about it. */
  constructor(
    operation: string,
    feishuCode: number | undefined,
    httpStatus: number | undefined,
    detail: string,
    explanation?: string,
  ) {
    const status = [httpStatus && `HTTP ${httpStatus}`, feishuCode !== undefined && `code ${feishuCode}`]
      .filter(Boolean)
      .join(', ');
    super(
      'feishu_api_error',
      `Feishu ${operation} failed (${status || detail})${explanation ? `: ${explanation}` : ''}`,
    );
    this.feishuCode = feishuCode;
    this.httpStatus = httpStatus;
  }

  get rateLimited(): boolean {
    return this.httpStatus === 429 || (this.feishuCode !== undefined && rateLimitCodes.has(this.feishuCode));
  }

  get scopeMissing(): boolean {
    return this.feishuCode === scopeMissingCode;
  }
}

export function isRateLimited(error: unknown): boolean {
  return error instanceof FeishuApiError && error.rateLimited;
}

/** An SDK (axios) failure as FeishuApiError: HTTP status and Feishu code from the answer's JSON, when it has one. */
export function toFeishuApiError(operation: string, error: unknown, explanation?: string): FeishuApiError {
  const response = recordField(asRecord(error), 'response');
  const data = recordField(response, 'data');
  const status = typeof response?.status === 'number' ? response.status : undefined;
  const code = typeof data?.code === 'number' ? data.code : undefined;
  return new FeishuApiError(
    operation,
    code,
    status,
    (error as Error).message ?? 'network error',
    explanation,
  );
}

/** Runs an SDK call and checks its answer (`code === 0`); failures become FeishuApiError. */
export async function checkedCall<T>(
  operation: string,
  request: () => Promise<unknown>,
  read: (body: JsonRecord) => T,
): Promise<T> {
  let body: JsonRecord | undefined;
  try {
    body = asRecord(await request());
  } catch (error) {
    throw toFeishuApiError(operation, error);
  }
  const code = body?.code;
  if (code !== 0) {
    throw new FeishuApiError(
      operation,
      typeof code === 'number' ? code : undefined,
      undefined,
      stringField(body, 'msg') ?? 'unexpected answer',
    );
  }
  return read(body ?? {});
}

export function requireString(operation: string, value: string | undefined): string {
  if (!value) throw new FeishuApiError(operation, undefined, undefined, 'answer is missing an id');
  return value;
}
