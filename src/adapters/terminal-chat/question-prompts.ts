import type { FormField } from '../../core/contracts/form-fields.js';
import type { InputAnswerInput, InputForm, InputFormRequest } from '../../core/contracts/input-form.js';

/**
 * A server's question in the terminal, asked field by field: each line typed is the current field's value (a
 * choice by its number or value, several by commas, yes/no for a checkbox, Enter to skip an optional one or keep
 * its default), `/decline` or `/cancel` answers the whole question, and a page to open is answered with `/done`.
 * Only what the person typed is collected here: the core checks it against the form and names what to fix.
 */

export type QuestionStep =
  | { ask: string }
  | { answer: Pick<InputAnswerInput, 'inputId' | 'key' | 'action' | 'content'> };

function describe(field: FormField): string {
  const parts = [field.label, ...(field.hint ? [`(${field.hint})`] : [])];
  switch (field.kind) {
    case 'choice':
    case 'choices':
      parts.push(
        `\n${field.options.map((option, index) => `    ${index + 1}. ${option.label}`).join('\n')}\n   `,
        field.kind === 'choices' ? 'numbers, separated by commas' : 'a number',
      );
      break;
    case 'boolean':
      parts.push('[y/n]');
      break;
    case 'number':
      parts.push(field.integer ? '(a whole number)' : '(a number)');
      break;
    case 'text':
      if (field.format) parts.push(`(${field.format === 'uri' ? 'a URL' : field.format})`);
  }
  const fallback = 'default' in field && field.default !== undefined ? ` [${String(field.default)}]` : '';
  return `${parts.join(' ')}${fallback}${field.required ? '' : ' (optional)'}: `;
}

function typedValue(field: FormField, typed: string): unknown {
  const pick = (text: string) => {
    if (field.kind !== 'choice' && field.kind !== 'choices') return text;
    const number = Number(text);
    return Number.isInteger(number) ? (field.options[number - 1]?.value ?? text) : text;
  };
  if (field.kind === 'boolean')
    return /^(y|yes|true)$/i.test(typed) ? true : /^(n|no|false)$/i.test(typed) ? false : typed;
  if (field.kind === 'choices')
    return typed
      .split(',')
      .map((each) => pick(each.trim()))
      .filter(Boolean);
  return pick(typed);
}

export class TerminalQuestion {
  private request = 0;
  private pending: number[] = [];
  private content: Record<string, unknown> = {};

  constructor(private readonly form: InputForm) {
    this.begin();
  }

  private get current(): InputFormRequest | undefined {
    return this.form.requests[this.request];
  }

  private begin(): void {
    const request = this.current;
    this.content = {};
    this.pending = request?.mode === 'form' ? request.fields.map((_field, index) => index) : [];
  }

  /** What to show now: the question, then its current field. */
  prompt(): string {
    const request = this.current;
    if (!request) return '';
    const intro = `${this.form.server} asks: ${request.message}`;
    if (request.mode === 'url')
      return `${intro}\n  Open ${request.url} (on ${request.host}), then type /done; or /decline.\n`;
    const [next] = this.pending;
    const field = next === undefined ? undefined : request.fields[next];
    return field ? `  ${describe(field)}` : `${intro}\n`;
  }

  /** The first prompt, with the question's own words. */
  start(): string {
    const request = this.current;
    if (!request || request.mode === 'url') return this.prompt();
    return `${this.form.server} asks: ${request.message}\n  (/decline or /cancel to answer no)\n${this.prompt()}`;
  }

  take(line: string): QuestionStep {
    const request = this.current;
    if (!request) return { ask: '' };
    const answer = (action: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown>) => ({
      answer: { inputId: this.form.inputId, key: request.key, action, ...(content ? { content } : {}) },
    });
    const typed = line.trim();
    if (typed === '/decline') return answer('decline');
    if (typed === '/cancel') return answer('cancel');
    if (request.mode === 'url') return typed === '/done' ? answer('accept') : { ask: this.prompt() };
    const index = this.pending.shift();
    const field = index === undefined ? undefined : request.fields[index];
    if (field) {
      const fallback = 'default' in field ? field.default : undefined;
      this.content[field.name] = typed === '' ? fallback : typedValue(field, typed);
    }
    return this.pending.length > 0 ? { ask: this.prompt() } : answer('accept', this.content);
  }

  /** The core found mistakes: those fields are asked again. */
  retry(errors: Readonly<Record<string, string>>): string {
    const request = this.current;
    if (request?.mode !== 'form') return this.prompt();
    this.pending = request.fields.flatMap((field, index) => (errors[field.name] ? [index] : []));
    const lines = request.fields
      .filter((field) => errors[field.name])
      .map((field) => `  ${field.label}: ${errors[field.name]}`);
    return `${lines.join('\n')}\n${this.prompt()}`;
  }

  /** The question was answered: the next one of the form, if any; false when none is left. */
  advance(): boolean {
    this.request += 1;
    this.begin();
    return this.current !== undefined;
  }
}
