/**
 * A field of a form a person fills in (what an MCP server's `requestedSchema` asks for, read by `core/forms`):
 * neutral, so each adapter renders it with its own inputs.
 */

export type TextFormat = 'email' | 'uri' | 'date' | 'date-time';

export interface ChoiceOption {
  value: string;
  label: string;
}

export interface FieldBase {
  /** The property name: the key the server gets the value under. */
  name: string;
  label: string;
  hint?: string;
  required: boolean;
}

export type FormField =
  | (FieldBase & {
      kind: 'text';
      format?: TextFormat;
      minLength?: number;
      maxLength?: number;
      default?: string;
    })
  | (FieldBase & { kind: 'number'; integer: boolean; minimum?: number; maximum?: number; default?: number })
  | (FieldBase & { kind: 'boolean'; default?: boolean })
  | (FieldBase & { kind: 'choice'; options: ChoiceOption[]; default?: string })
  | (FieldBase & {
      kind: 'choices';
      options: ChoiceOption[];
      minItems?: number;
      maxItems?: number;
      default?: string[];
    });
