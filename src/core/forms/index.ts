export { type CheckedAnswer, checkAnswer, type FieldValue } from './answers.js';
export { type ChoiceOption, type FormField, type FormOf, formOf, type TextFormat } from './fields.js';
export { secretFieldNames } from './secrets.js';
