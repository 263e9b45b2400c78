export { type CheckedAnswer, checkAnswer, type FieldValue } from './answers.js';
export { type FormOf, formOf } from './fields.js';
export { secretFieldNames } from './secrets.js';
