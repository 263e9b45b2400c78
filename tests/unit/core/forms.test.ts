import { describe, expect, it } from 'vitest';
import type { FormField } from '../../../src/core/contracts/form-fields.js';
import { checkAnswer, formOf, secretFieldNames } from '../../../src/core/forms/index.js';

const shipping = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', description: 'Who it goes to', minLength: 2, maxLength: 40 },
    email: { type: 'string', format: 'email', title: 'Email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date', default: '2026-12-01' },
    quantity: { type: 'integer', minimum: 1, maximum: 9, default: 1 },
    gift: { type: 'boolean', title: 'Gift wrap', default: false },
    speed: {
      type: 'string',
      oneOf: [
        { const: 'std', title: 'Standard' },
        { const: 'exp', title: 'Express' },
      ],
    },
    color: { type: 'string', enum: ['red', 'blue'], enumNames: ['Red', 'Blue'] },
    tags: {
      type: 'array',
      items: { type: 'string', enum: ['a', 'b', 'c'] },
      maxItems: 2,
      default: ['a', 'z'],
    },
  },
  required: ['name', 'quantity', 'speed'],
};

function fieldsOf(schema: unknown): FormField[] {
  const form = formOf(schema);
  if ('unsupported' in form) throw new Error(form.unsupported);
  return form.fields;
}

describe('formOf', () => {
  it('reads every kind of field the spec allows, with labels, hints, limits and defaults', () => {
    const fields = fieldsOf(shipping);
    expect(fields.map((field) => [field.name, field.kind, field.required])).toEqual([
      ['name', 'text', true],
      ['email', 'text', false],
      ['site', 'text', false],
      ['day', 'text', false],
      ['quantity', 'number', true],
      ['gift', 'boolean', false],
      ['speed', 'choice', true],
      ['color', 'choice', false],
      ['tags', 'choices', false],
    ]);
    expect(fields[0]).toMatchObject({ label: 'Name', hint: 'Who it goes to', minLength: 2, maxLength: 40 });
    expect(fields[1]).toMatchObject({ format: 'email' });
    expect(fields[3]).toMatchObject({ format: 'date', default: '2026-12-01' });
    expect(fields[4]).toMatchObject({ integer: true, minimum: 1, maximum: 9, default: 1 });
    expect(fields[6]).toMatchObject({
      options: [
        { value: 'std', label: 'Standard' },
        { value: 'exp', label: 'Express' },
      ],
    });
    expect(fields[7]).toMatchObject({
      options: [
        { value: 'red', label: 'Red' },
        { value: 'blue', label: 'Blue' },
      ],
    });
    // A default that is not one of the options is dropped.
    expect(fields[8]).toMatchObject({ maxItems: 2, default: ['a'] });
  });

  it('refuses a schema that is not a flat object of primitives', () => {
    expect(formOf({ type: 'string' })).toHaveProperty('unsupported');
    expect(formOf({ type: 'object', properties: { nested: { type: 'object' } } })).toEqual({
      unsupported: 'the field "nested" has a type forms cannot ask for (object)',
    });
    expect(
      formOf({ type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } }),
    ).toHaveProperty('unsupported');
  });
});

describe('checkAnswer', () => {
  const fields = fieldsOf(shipping);

  it('keeps exactly the form’s fields, typed, whatever else the client sent', () => {
    const answer = {
      name: '  Ada ',
      quantity: '3',
      speed: 'exp',
      gift: false,
      tags: ['b', 'b'],
      email: 'ada@example.com',
      injected: 'ignored',
    };
    expect(checkAnswer(fields, answer)).toEqual({
      content: {
        name: 'Ada',
        quantity: 3,
        speed: 'exp',
        gift: false,
        tags: ['b'],
        email: 'ada@example.com',
        // Left out: the default the form showed (SEP-1034).
        day: '2026-12-01',
      },
    });
  });

  it('gives a field left out its default, and leaves one the person cleared unanswered', () => {
    expect(checkAnswer(fields, { name: 'Ada', speed: 'std' })).toEqual({
      content: { name: 'Ada', speed: 'std', day: '2026-12-01', quantity: 1, gift: false, tags: ['a'] },
    });
    expect(checkAnswer(fields, { name: 'Ada', speed: 'std', quantity: 2, day: '', tags: [] })).toEqual({
      content: { name: 'Ada', speed: 'std', quantity: 2, gift: false },
    });
  });

  it('names each wrong or missing field', () => {
    const answer = {
      name: 'A',
      email: 'not-an-email',
      site: 'example.com',
      day: '2026-02-30',
      quantity: 2.5,
      speed: 'teleport',
      tags: ['a', 'b', 'c'],
    };
    expect(checkAnswer(fields, answer)).toEqual({
      errors: {
        name: 'Enter at least 2 characters.',
        email: 'Enter an email address.',
        site: 'Enter a full address, such as https://example.com.',
        day: 'Enter a date as YYYY-MM-DD.',
        quantity: 'Enter a whole number.',
        speed: 'Choose one of the options.',
        tags: 'Choose at most 2.',
      },
    });
    expect(checkAnswer(fields, { name: '   ', quantity: '' })).toEqual({
      errors: { name: 'Required.', quantity: 'Required.', speed: 'Required.' },
    });
    expect(checkAnswer(fields, { name: 'Ada', quantity: 12, speed: 'std' })).toEqual({
      errors: { quantity: 'Enter 9 or less.' },
    });
  });
});

describe('secretFieldNames', () => {
  it('finds fields that ask for a secret by name, label, hint or declared format', () => {
    const schema = {
      type: 'object',
      properties: {
        project: { type: 'string' },
        apiKey: { type: 'string' },
        pw: { type: 'string', title: 'Password' },
        code: { type: 'string', description: 'The one-time OTP from your phone' },
        hidden: { type: 'string', format: 'password' },
        tokenizer: { type: 'string', title: 'Tokenizer model' },
      },
    };
    expect(secretFieldNames(fieldsOf(schema), schema)).toEqual(['apiKey', 'pw', 'code', 'hidden']);
  });
});
