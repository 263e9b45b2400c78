import { anyJson, errors, idParameter, json } from './openapi-parts.js';
import { errorBody } from './schemas.js';

/**
 * The connection paths of the OpenAPI document (docs/api-and-console.md, "Connections"): there when a server in
 * `mcpServers` wants OAuth. Never a token: who connected, when, and the scope.
 */

const item = '{server, owner, connectedBy: {platform, id, name}, connectedAt, updatedAt, expiresAt, scope}';
const server = idParameter('server', 'An MCP server with `oauth` in the config');
const notFound = {
  '404': {
    description: '`not_found`: no such server wants OAuth, or no such connection',
    ...json(errorBody),
  },
};
const forbidden = {
  '403': {
    description: "`forbidden`: not this key's connection, or a shared server (an admin's)",
    ...json(errorBody),
  },
};

export const connectionPaths = {
  '/connections': {
    get: {
      operationId: 'listConnections',
      summary:
        "The key's own connections and the shared ones (a read key: everyone's), and the servers that want OAuth",
      'x-scope': 'any',
      responses: { '200': anyJson(`{servers: [{name, identity}], items: [${item}]}`), ...errors },
    },
  },
  '/connections/{server}': {
    delete: {
      operationId: 'deleteConnection',
      summary: 'Revokes the tokens at the provider (RFC 7009, when it offers it) and deletes them',
      'x-scope': 'any: the owner; a read key any owner with `?owner=`',
      parameters: [
        server,
        {
          name: 'owner',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'Whose connection (an admin)',
        },
      ],
      responses: { '200': anyJson('{server, owner, revoked}'), ...errors, ...forbidden, ...notFound },
    },
  },
  '/connections/{server}/link': {
    post: {
      operationId: 'createConnectLink',
      summary: 'A single-use Connect link for this key (10 minutes), to open in a browser',
      'x-scope': 'any (a shared server: read)',
      parameters: [server],
      responses: { '201': anyJson('{server, owner, url, expiresAt}'), ...errors, ...forbidden, ...notFound },
    },
  },
};
