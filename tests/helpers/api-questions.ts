import type { FakeModelServer } from './fake-model-server.js';

/**
 * What the tests of servers' questions over the HTTP API share: two chat keys (the one who asks, and a stranger),
 * requests as either, answers to a question, and what the model was told of a call.
 */

export const questionKeys = { dev: 'dev-key-0123456789abcdef', mallory: 'mallory-key-0123456789abcdef' };

/** The environment of a Butler answering with `model`, and holding the two keys. */
export const questionEnv = (model: FakeModelServer) => ({
  BUTLER_BASE_URL: model.baseUrl,
  BUTLER_MODEL: 'test-model',
  KEY_DEV: questionKeys.dev,
  KEY_MALLORY: questionKeys.mallory,
});

/** The `api` configuration of the two keys. */
export const questionKeysConfig = {
  api: {
    keys: [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      { name: 'dev', key: '${KEY_DEV}', scopes: ['chat'] },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
      { name: 'mallory', key: '${KEY_MALLORY}', scopes: ['chat'] },
    ],
  },
};

/** Requests to the API of the Butler at `url()` (the one running now), as `dev` unless told otherwise. */
export function questionApi(url: () => string) {
  const api = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${url()}/api/v1${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${init.key ?? questionKeys.dev}`,
        'content-type': 'application/json',
      },
    });
  const answer = (inputId: string, body: unknown, key = questionKeys.dev) =>
    api(`/inputs/${inputId}`, { method: 'POST', body: JSON.stringify(body), key });
  return { api, answer };
}

/** The last tool result the model was given for the call `callId`, if any. */
export function toolResultOf(model: FakeModelServer, callId: string): string | undefined {
  for (const request of [...model.requests].reverse()) {
    const messages = (
      request.body as { messages?: Array<{ role: string; tool_call_id?: string; content?: string }> }
    ).messages;
    const found = messages?.find((message) => message.role === 'tool' && message.tool_call_id === callId);
    if (found) return String(found.content);
  }
  return undefined;
}
