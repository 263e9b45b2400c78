import { ButlerError } from './errors.js';

/**
 * A server's question to the person in the middle of a call (MCP elicitation): a form built from
 * `requestedSchema`, or a page at `url` to open (`mode: 'url'`). `key` names it among the round's requests.
 */
export type InputRequest =
  | { key: string; mode: 'form'; message: string; requestedSchema: unknown }
  | { key: string; mode: 'url'; message: string; url: string; elicitationId?: string };

export type InputAction = 'accept' | 'decline' | 'cancel';

/** A person's answer to one request: MCP's `ElicitResult`. `content` only with `accept` on a form. */
export interface InputResponse {
  action: InputAction;
  content?: Record<string, string | number | boolean | string[]>;
}

/** What a retried call sends back: a response per request of the round, and the server's state untouched. */
export interface InputAnswer {
  responses: Record<string, InputResponse>;
  requestState?: string;
}

/**
 * A call the server answered with `input_required` (MCP 2026-07-28): it did not finish, and goes on once the
 * person who asked for it has answered, by the same call again with the answers and `requestState` as it came.
 */
export class InputNeededError extends ButlerError {
  constructor(
    readonly server: string,
    readonly requests: readonly InputRequest[],
    readonly requestState: string | undefined,
  ) {
    super('input_needed', `${server} asks for input before the call can go on.`);
  }
}
