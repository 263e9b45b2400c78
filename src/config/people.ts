import { z } from 'zod';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { type Platform, platforms } from '../core/contracts/events.js';
import { PeopleDirectory } from '../core/people/index.js';
import { ApprovalPolicy } from '../core/tools/policy.js';
import type { ApiKey } from './api-keys.js';

/**
 * `people:` in the config file: who is who across platforms. Slack's `U0OLGA`, Feishu's `ou_olga` and the API
 * key `olga` listed as one person approve, ask, own tasks and spend budgets as one (docs/configuration.md,
 * "People"). An identity belongs to one person at most; an unlisted one is a person of its own.
 */

const personSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9._-]{1,64}$/, 'lowercase letters, digits, . _ and - only, at most 64'),
    slack: z
      .string()
      .regex(/^[UW][A-Z0-9]+$/, 'a Slack member id: U… or W…, upper-case letters and digits')
      .optional(),
    feishu: z
      .string()
      .regex(/^ou_[A-Za-z0-9]+$/, 'a Feishu open_id: ou_ followed by letters and digits')
      .optional(),
    /** An API key's name (`api.keys`): what the key's requests and the admin console sign in as. */
    api: z.string().min(1).optional(),
    /** The terminal chat's user: the Unix user name, or the one `/as` switches to. */
    console: z.string().min(1).optional(),
  })
  .strict()
  .refine(
    (person) => platforms.some((platform) => person[platform] !== undefined),
    'give at least one identity: slack, feishu, api or console',
  );

/** Where `key` was seen first, or undefined when this is the first time (it is then seen at `index`). */
function seenBefore(seen: Map<string, number>, key: string, index: number): number | undefined {
  const first = seen.get(key);
  if (first === undefined) seen.set(key, index);
  return first;
}

export const peopleSchema = z
  .array(personSchema)
  .default([])
  .superRefine((people, context) => {
    const names = new Map<string, number>();
    const identities = new Map<string, number>();
    people.forEach((person, index) => {
      const named = seenBefore(names, person.name, index);
      if (named !== undefined)
        context.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `people ${named} and ${index} are both named ${person.name}`,
        });
      for (const platform of platforms) {
        const id = person[platform];
        const owner = id === undefined ? undefined : seenBefore(identities, `${platform}:${id}`, index);
        if (owner !== undefined)
          context.addIssue({
            code: 'custom',
            path: [index, platform],
            message: `${platform} ${id} is already people.${owner}'s: an identity is one person's`,
          });
      }
    });
  });

export type PeopleConfig = z.infer<typeof peopleSchema>;

/**
 * Who may approve on each platform, by their ids there, as Butler will decide it: the ids listed in
 * `approvers`, and each listed person's id there when another identity of theirs is listed. The start-up
 * checks that need an approver count these.
 */
export function approversByPlatform(file: {
  approvers: Readonly<Record<Platform, readonly string[]>>;
  people: PeopleConfig;
}): Record<Platform, string[]> {
  const policy = new ApprovalPolicy(file.approvers, new PeopleDirectory(file.people));
  return {
    slack: policy.approversOn('slack'),
    feishu: policy.approversOn('feishu'),
    console: policy.approversOn('console'),
    api: policy.approversOn('api'),
  };
}

/** A person's `api` names a configured key: a name no key has would be nobody's identity. */
export function peopleIssues(people: PeopleConfig, apiKeys: readonly Pick<ApiKey, 'name'>[]): ConfigIssue[] {
  return people.flatMap((person, index) =>
    person.api === undefined || apiKeys.some((key) => key.name === person.api)
      ? []
      : [
          {
            variable: `config file: people.${index}.api`,
            message: `no API key is named ${person.api} (config file: api.keys)`,
          },
        ],
  );
}
