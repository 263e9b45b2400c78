import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/adapters/api/openapi.js';

/**
 * What `npx @redocly/cli lint` asks of the published document (its recommended rules, checked by hand
 * while writing this): an operationId on every operation, unique; a license; no server on localhost.
 */
describe('the OpenAPI document', () => {
  const document = openApiDocument('/api/v1');
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId?: string; responses?: object }>).map(
      ([method, operation]) => ({ path, method, operation }),
    ),
  );

  it('names every operation once', () => {
    const missing = operations.filter(({ operation }) => !operation.operationId);
    expect(missing.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a license and a relative server, and every operation answers 4xx', () => {
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(document.servers).toEqual([{ url: '/api/v1' }]);
    for (const { operation } of operations)
      expect(Object.keys(operation.responses ?? {}).some((status) => status.startsWith('4'))).toBe(true);
  });

  it('describes messages with files, the file event and the download', () => {
    const send = document.paths['/conversations/{id}/messages'].post;
    expect(Object.keys(send.requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
    expect(JSON.stringify(send.requestBody.content['application/json'])).toContain(
      '"contentEncoding":"base64"',
    );
    expect(send.responses).toHaveProperty('413');
    expect(JSON.stringify(send.responses['200'])).toContain('"const":"file"');
    const download = document.paths['/files/{id}'].get;
    expect(download.operationId).toBe('downloadFile');
    expect(download.responses).toHaveProperty('404');
  });

  it('describes scheduled tasks, and the time zone a message may carry', () => {
    const create = document.paths['/schedules'].post;
    const body = create.requestBody.content['application/json'].schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(body.properties)).toEqual([
      'conversationId',
      'conversation',
      'prompt',
      'at',
      'cron',
      'timezone',
    ]);
    expect(body.required).toEqual(['prompt']);
    expect(create.responses).toHaveProperty('201');
    expect(document.paths['/schedules/{id}'].delete.responses).toHaveProperty('409');
    expect(document.paths['/schedules/{id}/pause'].post.operationId).toBe('pauseSchedule');
    const send = document.paths['/conversations/{id}/messages'].post.requestBody.content;
    expect(send['multipart/form-data'].schema.properties).toHaveProperty('timezone');
    expect(JSON.stringify(send['application/json'])).toContain('"timezone"');
  });
});
