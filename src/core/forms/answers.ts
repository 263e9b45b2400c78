import type { FormField } from '../contracts/form-fields.js';

/** What a form's answer holds, per field: what MCP's `ElicitResult.content` allows. */
export type FieldValue = string | number | boolean | string[];

export type CheckedAnswer = { content: Record<string, FieldValue> } | { errors: Record<string, string> };

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function isDate(value: string): boolean {
  const match = datePattern.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isUri(value: string): boolean {
  try {
    return /^[a-z][a-z0-9+.-]*:/i.test(value) && new URL(value).protocol !== '';
  } catch {
    return false;
  }
}

const formatCheck = {
  email: (value: string) => emailPattern.test(value) || 'Enter an email address.',
  uri: (value: string) => isUri(value) || 'Enter a full address, such as https://example.com.',
  date: (value: string) => isDate(value) || 'Enter a date as YYYY-MM-DD.',
  'date-time': (value: string) =>
    (dateTimePattern.test(value) && !Number.isNaN(Date.parse(value))) || 'Enter a date and time.',
};

const isEmpty = (value: unknown) =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** One field's value, or why it is wrong. Strings are trimmed; numbers may come as text (form inputs send text). */
function checkField(field: FormField, value: unknown): { value: FieldValue } | { error: string } {
  switch (field.kind) {
    case 'text': {
      if (typeof value !== 'string') return { error: 'Enter text.' };
      const trimmed = value.trim();
      if (field.minLength !== undefined && trimmed.length < field.minLength)
        return { error: `Enter at least ${field.minLength} characters.` };
      if (field.maxLength !== undefined && trimmed.length > field.maxLength)
        return { error: `Enter at most ${field.maxLength} characters.` };
      const formatted = field.format ? formatCheck[field.format](trimmed) : true;
      return formatted === true ? { value: trimmed } : { error: formatted };
    }
    case 'number': {
      const number =
        typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
      if (!Number.isFinite(number)) return { error: 'Enter a number.' };
      if (field.integer && !Number.isInteger(number)) return { error: 'Enter a whole number.' };
      if (field.minimum !== undefined && number < field.minimum)
        return { error: `Enter ${field.minimum} or more.` };
      if (field.maximum !== undefined && number > field.maximum)
        return { error: `Enter ${field.maximum} or less.` };
      return { value: number };
    }
    case 'boolean':
      if (typeof value === 'boolean') return { value };
      if (value === 'true' || value === 'false') return { value: value === 'true' };
      return { error: 'Choose yes or no.' };
    case 'choice':
      return typeof value === 'string' && field.options.some((option) => option.value === value)
        ? { value }
        : { error: 'Choose one of the options.' };
    case 'choices': {
      const values = Array.isArray(value) ? value : [value];
      if (
        !values.every(
          (each) => typeof each === 'string' && field.options.some((option) => option.value === each),
        )
      )
        return { error: 'Choose among the options.' };
      const unique = [...new Set(values as string[])];
      if (field.minItems !== undefined && unique.length < field.minItems)
        return { error: `Choose at least ${field.minItems}.` };
      if (field.maxItems !== undefined && unique.length > field.maxItems)
        return { error: `Choose at most ${field.maxItems}.` };
      return { value: unique };
    }
  }
}

/**
 * A person's answer checked against the form, whatever client it came from: the content holds exactly the
 * form's fields that were answered (nothing else the client sent), or an error for each field that is wrong. A
 * field the answer leaves out takes its default (SEP-1034: what the form showed filled in); one sent empty was
 * cleared by the person and stays unanswered.
 */
export function checkAnswer(
  fields: readonly FormField[],
  answer: Readonly<Record<string, unknown>>,
): CheckedAnswer {
  const content: Record<string, FieldValue> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const given = Object.hasOwn(answer, field.name);
    // A server's default that does not fit its own field is no answer: the field counts as left empty.
    const fallback = field.default !== undefined && 'value' in checkField(field, field.default);
    const raw = given ? answer[field.name] : fallback ? field.default : undefined;
    if (isEmpty(raw) || (typeof raw === 'string' && raw.trim() === '')) {
      if (field.required) errors[field.name] = 'Required.';
      continue;
    }
    const checked = checkField(field, raw);
    if ('error' in checked) errors[field.name] = checked.error;
    else content[field.name] = checked.value;
  }
  return Object.keys(errors).length > 0 ? { errors } : { content };
}
