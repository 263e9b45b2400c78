import type { InputFormRequest } from '../contracts/input-form.js';
import type { InputRequest, InputResponse } from '../contracts/input-needed.js';
import { formOf, secretFieldNames } from '../forms/index.js';

/**
 * A server's questions, sorted: those a person is shown, and those Butler answers itself, declining them with
 * a note for the person: a form that asks for a secret (the spec forbids servers to ask for one in a form),
 * one whose schema a form cannot show, a page that is not https.
 */
export interface SortedQuestions {
  shown: InputFormRequest[];
  declined: Record<string, InputResponse>;
  /** Why each was declined, by key, in words for the person. */
  notes: Record<string, string>;
}

function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' ? parsed.host : undefined;
  } catch {
    return undefined;
  }
}

export function sortQuestions(server: string, requests: readonly InputRequest[]): SortedQuestions {
  const sorted: SortedQuestions = { shown: [], declined: {}, notes: {} };
  const decline = (key: string, note: string) => {
    sorted.declined[key] = { action: 'decline' };
    sorted.notes[key] = note;
  };
  for (const request of requests) {
    if (request.mode === 'url') {
      const host = hostOf(request.url);
      if (host)
        sorted.shown.push({
          key: request.key,
          mode: 'url',
          message: request.message,
          url: request.url,
          host,
        });
      else decline(request.key, `${server} asked you to open a page that is not https, so Butler declined.`);
      continue;
    }
    const form = formOf(request.requestedSchema);
    if ('unsupported' in form) {
      decline(
        request.key,
        `${server} asked for a form Butler cannot show (${form.unsupported}), so Butler declined it.`,
      );
      continue;
    }
    const secrets = secretFieldNames(form.fields, request.requestedSchema);
    if (secrets.length > 0) {
      decline(
        request.key,
        `${server} asked for ${secrets.join(', ')} in a form. Butler never asks for passwords, tokens or keys in a form, so it declined; connect the account instead, or give it to ${server} another way.`,
      );
      continue;
    }
    sorted.shown.push({
      key: request.key,
      mode: 'form',
      message: request.message,
      fields: form.fields,
      requestedSchema: request.requestedSchema,
    });
  }
  return sorted;
}
