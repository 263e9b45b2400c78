import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiScope } from '../../config/api-keys.js';
import { StorageError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { Caller } from './auth.js';
import { ApiError, sendError } from './http-json.js';

/** The API's dispatcher: authentication, then method and path, then the scope the route needs. */

export interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  caller: Caller;
  /** Path parameters, decoded. */
  params: string[];
  query: URLSearchParams;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Matched against the path after `/api/v1`. */
  pattern: RegExp;
  /** The scope a key needs; `any` for every valid key. */
  scope: ApiScope | 'any';
  /**
   * `narrowed`: it reads and decides only within the caller's tenants (tenant-scope.ts). A key limited to tenants
   * reaches no other route: one that does not say so is refused to it, so a new route cannot leak a tenant.
   */
  tenants?: 'narrowed';
  handle(context: RouteContext): Promise<void>;
}

export function dispatcher(input: {
  prefix: string;
  routes: readonly Route[];
  authenticate: (request: IncomingMessage) => Caller | undefined;
  /** Paths answered without a key (the OpenAPI document). */
  open: ReadonlyMap<string, RouteHandler>;
  logger: Logger;
}): RouteHandler {
  return async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const path = url.pathname.slice(input.prefix.length) || '/';
    try {
      const open = input.open.get(path);
      if (open && request.method === 'GET') return await open(request, response);
      const caller = input.authenticate(request);
      if (!caller) {
        response.setHeader('www-authenticate', 'Bearer');
        throw new ApiError(401, 'unauthorized', 'Send a valid API key: Authorization: Bearer <key>.');
      }
      const matching = input.routes.filter((route) => route.pattern.test(path));
      if (matching.length === 0) throw new ApiError(404, 'not_found', `No endpoint at ${url.pathname}.`);
      const route = matching.find((candidate) => candidate.method === request.method);
      if (!route) {
        response.setHeader('allow', [...new Set(matching.map((candidate) => candidate.method))].join(', '));
        throw new ApiError(405, 'method_not_allowed', `${request.method} is not allowed here.`);
      }
      if (route.scope !== 'any' && !caller.scopes.includes(route.scope))
        throw new ApiError(403, 'forbidden', `The key ${caller.name} lacks the ${route.scope} scope.`);
      if (caller.tenants && route.tenants !== 'narrowed')
        throw new ApiError(
          403,
          'forbidden',
          `The key ${caller.name} is limited to ${caller.tenants.join(', ')}: this endpoint reaches every tenant.`,
        );
      const params = (route.pattern.exec(path) ?? []).slice(1).map(decodedPathPart);
      await route.handle({ request, response, caller, params, query: url.searchParams });
    } catch (error) {
      if (error instanceof ApiError) return sendError(response, error);
      // Like /readyz: a request that needs the database while it is unreachable is told so, and when to retry.
      if (error instanceof StorageError && !response.headersSent) {
        input.logger.warn({ err: error, path: url.pathname }, 'API request failed on the database');
        return sendError(
          response,
          new ApiError(
            503,
            'database_unavailable',
            `Butler cannot use its database right now (${error.message}).`,
            {
              'retry-after': '5',
            },
          ),
        );
      }
      if (response.headersSent) {
        input.logger.error({ err: error, path: url.pathname }, 'API stream failed');
        response.end();
        return;
      }
      throw error;
    }
  };
}

function decodedPathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ApiError(400, 'invalid_path', `The path part ${part} is not valid percent-encoding.`);
  }
}
