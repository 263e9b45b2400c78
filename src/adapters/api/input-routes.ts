import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { ApiError, readJson, sendJson } from './http-json.js';
import type { Route } from './routes.js';
import { describeIssues, inputAnswerBody } from './schemas.js';

const refusedStatus = {
  missing: 404,
  not_yours: 403,
  closed: 409,
  answered_already: 409,
  invalid: 400,
} as const;

/** Answers to what a server asked a key mid-call (the `input_required` event of its stream). */
export function inputRoutes(deps: { intake: ButlerIntake }): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/inputs\/([^/]+)$/,
      scope: 'chat',
      async handle({ request, response, caller, params }) {
        const parsed = inputAnswerBody.safeParse(await readJson(request));
        if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, 'body'));
        const { action, key, content } = parsed.data;
        const result = await deps.intake.answerInput({
          user: { platform: 'api', id: caller.name, name: caller.name },
          inputId: params[0] ?? '',
          action,
          ...(key === undefined ? {} : { key }),
          ...(content === undefined ? {} : { content }),
        });
        if (!result.ok) {
          if (result.errors) {
            sendJson(response, 400, { error: result.reason, message: result.message, fields: result.errors });
            return;
          }
          throw new ApiError(refusedStatus[result.reason], result.reason, result.message);
        }
        sendJson(response, 200, { ok: true, status: result.status });
      },
    },
  ];
}
