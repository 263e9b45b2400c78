import type { ChatUser, Platform } from './events.js';
import type { FormField } from './form-fields.js';

/** One question of a server, as a person sees it: a form of fields, or a page to open on `host`. */
export type InputFormRequest =
  | { key: string; mode: 'form'; message: string; fields: FormField[]; requestedSchema: unknown }
  | { key: string; mode: 'url'; message: string; url: string; host: string };

/**
 * What a server asks the person who asked for a call, to show where they can answer it (the thread, their
 * direct chat, the API's stream). Answered once, by `requester` only, before `expiresAt`.
 */
export interface InputForm {
  inputId: string;
  server: string;
  /** The tool as the model calls it. */
  tool: string;
  requester: ChatUser;
  requests: InputFormRequest[];
  expiresAt: Date;
}

/** One question of a wait, for the person who may answer it (to build a platform's form from). */
export type InputQuestionResult =
  | { ok: true; server: string; request: InputFormRequest }
  | { ok: false; reason: 'missing' | 'not_yours' | 'closed'; message: string };

/** A person's answer to one question of a form, from any channel: checked on the server whatever the client did. */
export interface InputAnswerInput {
  /** The answer's channel: a person answers on the platform the question was asked on. */
  user: ChatUser & { platform: Platform };
  inputId: string;
  /** Which question of the form; the only one when absent. */
  key?: string;
  action: 'accept' | 'decline' | 'cancel';
  /** The values of an accepted form, by field name (a form client's raw values: text for numbers is fine). */
  content?: Readonly<Record<string, unknown>>;
}

export type InputAnswerResult =
  | { ok: true; status: 'answered' | 'partly'; server: string }
  | {
      ok: false;
      reason: 'missing' | 'not_yours' | 'closed' | 'answered_already' | 'invalid';
      message: string;
      /** `invalid`: what is wrong, by field name. */
      errors?: Record<string, string>;
    };
