import { z } from 'zod';
import { errorBody } from './schemas.js';

/** The pieces every path of the OpenAPI document is built from: zod schemas as JSON Schema, errors, ids. */

export const schema = (type: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(type, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
};

/** Query parameters of an object schema, one per property. */
export function parameters(type: z.ZodObject) {
  const json = schema(type) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

export const idParameter = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

export const json = (body: z.ZodType) => ({ content: { 'application/json': { schema: schema(body) } } });
export const anyJson = (description: string) => ({
  description,
  content: { 'application/json': { schema: {} } },
});
export const errors = {
  '400': { description: 'Bad request', ...json(errorBody) },
  '401': { description: 'Missing or wrong API key', ...json(errorBody) },
  '403': { description: 'The key lacks the scope', ...json(errorBody) },
  '503': {
    description: '`server_busy`: API requests hold every connection but those kept for webhooks; retry later',
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
    ...json(errorBody),
  },
};
