import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { Store } from '../../core/contracts/store.js';
import { query } from './admin-routes.js';
import { ApiError, readJson, sendJson } from './http-json.js';
import type { Route } from './routes.js';
import { describeIssues, feedbackBody, pageQuery } from './schemas.js';

/**
 * Feedback on Butler's replies from other clients (a key rates the turns of its own conversations: the `done`
 * event names each turn), and the list of every rating for admins, newest first.
 */
export function feedbackRoutes(deps: { intake: ButlerIntake; store: Store }): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/turns\/([^/]+)\/feedback$/,
      scope: 'chat',
      async handle({ request, response, caller, params }) {
        const parsed = feedbackBody.safeParse(await readJson(request));
        if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, 'body'));
        const result = await deps.intake.recordFeedback({
          platform: 'api',
          user: { id: caller.name, name: caller.name },
          reply: { turnId: params[0] ?? '', workspace: caller.name },
          rating: parsed.data.rating,
          comment: parsed.data.comment,
        });
        if (!result.ok) throw new ApiError(404, result.code, result.message);
        const { feedback } = result;
        sendJson(response, 200, {
          turnId: feedback.turnId,
          rating: feedback.rating,
          comment: feedback.comment,
          message: result.message,
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/feedback$/,
      scope: 'read',
      async handle({ response, query: params }) {
        sendJson(response, 200, await deps.store.feedback.list(query(pageQuery, params)));
      },
    },
  ];
}
