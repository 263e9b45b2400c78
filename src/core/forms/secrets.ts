import type { FormField } from '../contracts/form-fields.js';

/**
 * Fields that ask for a secret. MCP forbids servers to request sensitive information through form elicitation
 * (2025-11-25, Elicitation: "Servers MUST NOT use form mode to request sensitive information"), so Butler never
 * shows such a form: it declines it. Known by name, label or hint; a `password` format is not in the spec's
 * schema but some servers send it.
 */
const secretWords =
  /\b(pass(word|phrase|code)?|secret|token|api[\s_-]?key|private[\s_-]?key|access[\s_-]?key|credentials?|otp|pin|cvv|cvc|ssn)\b/i;

const words = (text: string) => text.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');

function isSecretField(field: FormField, schema?: unknown): boolean {
  const declared =
    typeof schema === 'object' &&
    schema !== null &&
    ((schema as { format?: unknown }).format === 'password' ||
      (schema as { writeOnly?: unknown }).writeOnly === true);
  return (
    declared || [field.name, field.label, field.hint ?? ''].some((text) => secretWords.test(words(text)))
  );
}

/** The names of the fields in `requestedSchema` that ask for a secret. */
export function secretFieldNames(fields: readonly FormField[], requestedSchema: unknown): string[] {
  const properties =
    typeof requestedSchema === 'object' && requestedSchema !== null
      ? ((requestedSchema as { properties?: Record<string, unknown> }).properties ?? {})
      : {};
  return fields.filter((field) => isSecretField(field, properties[field.name])).map((field) => field.name);
}
