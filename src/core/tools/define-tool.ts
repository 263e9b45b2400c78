import { z } from 'zod';
import type { ChatUser } from '../contracts/events.js';
import type {
  ArgumentsCheck,
  JsonSchema,
  PersonalOwner,
  Risk,
  Tool,
  ToolContext,
  ToolOutput,
} from './tool.js';

/** Schema → model parameters (input side: defaulted fields stay optional) without the `$schema` key. */
export function toParameters(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
  return parameters;
}

export function checkArguments<T>(schema: z.ZodType<T>, raw: unknown): ArgumentsCheck<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    error: parsed.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'arguments'}: ${issue.message}`)
      .join('; '),
  };
}

export interface ToolSpec<Schema extends z.ZodType> {
  name: string;
  description: string;
  schema: Schema;
  risk: Risk;
  summarize(input: z.output<Schema>): string;
  execute(input: z.output<Schema>, context: ToolContext): Promise<ToolOutput>;
  personal?(input: z.output<Schema>, requesters: readonly ChatUser[]): PersonalOwner;
}

/** A tool whose arguments are described and validated by a zod schema. */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): Tool<z.output<Schema>> {
  return {
    name: spec.name,
    description: spec.description,
    risk: spec.risk,
    parameters: toParameters(spec.schema),
    parse: (raw) => checkArguments(spec.schema as z.ZodType<z.output<Schema>>, raw),
    summarize: spec.summarize,
    execute: spec.execute,
    ...(spec.personal ? { personal: spec.personal } : {}),
  };
}
