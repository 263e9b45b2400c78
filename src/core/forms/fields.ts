/**
 * The fields of a form an MCP server asks a person to fill in (elicitation, form mode), read from its
 * `requestedSchema`: a flat object of primitive properties (MCP 2025-11-25 and 2026-07-28, "Requested schema").
 * Platform-neutral: each adapter renders these as its own inputs, and `checkAnswer` validates what comes back.
 */

import type { ChoiceOption, FieldBase, FormField, TextFormat } from '../contracts/form-fields.js';

export type FormOf = { fields: FormField[] } | { unsupported: string };

const formats: readonly string[] = ['email', 'uri', 'date', 'date-time'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
const finite = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((each) => typeof each === 'string') ? value : undefined;

/** `oneOf`/`anyOf` of `{ const, title }`, or a plain `enum` (with the legacy `enumNames` as labels). */
function optionsOf(schema: Record<string, unknown>): ChoiceOption[] | undefined {
  const titled = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(titled)) {
    const options = titled.flatMap((each) =>
      isRecord(each) && typeof each.const === 'string'
        ? [{ value: each.const, label: text(each.title) ?? each.const }]
        : [],
    );
    return options.length === titled.length && options.length > 0 ? options : undefined;
  }
  const values = strings(schema.enum);
  if (!values || values.length === 0) return undefined;
  const names = strings(schema.enumNames);
  return values.map((value, index) => ({ value, label: names?.[index] ?? value }));
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function fieldOf(name: string, schema: unknown, required: boolean): FormField | string {
  if (!isRecord(schema)) return `the field "${name}" has no schema`;
  const base: FieldBase = {
    name,
    label: text(schema.title) ?? name,
    required,
    ...optional('hint', text(schema.description)),
  };
  switch (schema.type) {
    case 'string': {
      const options = optionsOf(schema);
      if (options) {
        const fallback = typeof schema.default === 'string' ? schema.default : undefined;
        const known = options.some((option) => option.value === fallback);
        return { ...base, kind: 'choice', options, ...optional('default', known ? fallback : undefined) };
      }
      const format =
        typeof schema.format === 'string' && formats.includes(schema.format) ? schema.format : undefined;
      return {
        ...base,
        kind: 'text',
        ...optional('format', format as TextFormat | undefined),
        ...optional('minLength', count(schema.minLength)),
        ...optional('maxLength', count(schema.maxLength)),
        ...optional('default', typeof schema.default === 'string' ? schema.default : undefined),
      };
    }
    case 'number':
    case 'integer':
      return {
        ...base,
        kind: 'number',
        integer: schema.type === 'integer',
        ...optional('minimum', finite(schema.minimum)),
        ...optional('maximum', finite(schema.maximum)),
        ...optional('default', finite(schema.default)),
      };
    case 'boolean':
      return {
        ...base,
        kind: 'boolean',
        ...optional('default', typeof schema.default === 'boolean' ? schema.default : undefined),
      };
    case 'array': {
      const options = isRecord(schema.items) ? optionsOf(schema.items) : undefined;
      if (!options) return `the field "${name}" is a list of something other than choices`;
      const values = new Set(options.map((option) => option.value));
      const fallback = strings(schema.default)?.filter((value) => values.has(value));
      return {
        ...base,
        kind: 'choices',
        options,
        ...optional('minItems', count(schema.minItems)),
        ...optional('maxItems', count(schema.maxItems)),
        ...optional('default', fallback),
      };
    }
    default:
      return `the field "${name}" has a type forms cannot ask for (${String(schema.type)})`;
  }
}

/** The form a `requestedSchema` describes, in its properties' order; or why it cannot be asked. */
export function formOf(schema: unknown): FormOf {
  if (!isRecord(schema) || schema.type !== 'object' || !isRecord(schema.properties))
    return { unsupported: 'the requested schema is not an object with properties' };
  const required = new Set(strings(schema.required) ?? []);
  const fields: FormField[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const field = fieldOf(name, property, required.has(name));
    if (typeof field === 'string') return { unsupported: field };
    fields.push(field);
  }
  return { fields };
}
