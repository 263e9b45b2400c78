import { z } from 'zod';
import { platforms } from '../core/contracts/events.js';

/**
 * `channels:` in the config file: per-channel profiles (docs/policy.md, "Channel profiles"). Each names
 * where it applies (one channel, a list, or a workspace) and what changes there; the first match wins and
 * unmatched conversations keep the defaults. `channel-profiles.ts` resolves them (`${VAR}` in a profile
 * model's `baseUrl` and `apiToken`, agent names).
 */

const modelObject = z
  .object({
    /** The model's name at the endpoint. */
    name: z.string().min(1),
    baseUrl: z.string().min(1).optional(),
    apiToken: z.string().min(1).optional(),
  })
  .strict()
  .check((context) => {
    const model = context.value;
    // Butler's key never goes to another endpoint, and a forgotten key shows now rather than as a 401 later.
    if (model.baseUrl !== undefined && model.apiToken === undefined)
      context.issues.push({
        code: 'custom',
        message:
          "needs `apiToken`, this endpoint's key (read from the environment, as elsewhere in this file)",
        input: model,
        path: ['apiToken'],
      });
    if (model.apiToken !== undefined && model.baseUrl === undefined)
      context.issues.push({
        code: 'custom',
        message: "needs `baseUrl` (a model name alone uses Butler's endpoint and key)",
        input: model,
        path: ['baseUrl'],
      });
  });

const channelSchema = z
  .object({
    name: z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$/, 'letters, digits, - and _, at most 63'),
    platform: z.enum(platforms),
    id: z.string().min(1).optional(),
    ids: z.array(z.string().min(1)).min(1).optional(),
    workspace: z.string().min(1).optional(),
    instructions: z.string().trim().min(1).optional(),
    /** A model name on Butler's endpoint, or `{ name, baseUrl, apiToken }` for another endpoint. */
    model: z
      .preprocess((value) => (typeof value === 'string' ? { name: value } : value), modelObject)
      .optional(),
    tools: z.array(z.string().min(1)).optional(),
    agents: z.array(z.string().min(1)).optional(),
    approvers: z.array(z.string().min(1)).min(1).optional(),
    approversMode: z.enum(['add', 'replace']).optional(),
  })
  .strict()
  .check((context) => {
    const channel = context.value;
    const problem = (message: string, key: string) =>
      context.issues.push({ code: 'custom', message, input: channel, path: [key] });
    const selectors = (['id', 'ids', 'workspace'] as const).filter((key) => channel[key] !== undefined);
    if (selectors.length !== 1)
      problem('give exactly one of `id`, `ids` or `workspace`', selectors[1] ?? 'id');
    if (channel.approversMode !== undefined && channel.approvers === undefined)
      problem('needs `approvers`, the people it adds or puts in place', 'approversMode');
  });

export const channelsSchema = z
  .array(channelSchema)
  .default([])
  .check((context) => {
    const seen = new Set<string>();
    context.value.forEach((channel, index) => {
      if (seen.has(channel.name))
        context.issues.push({
          code: 'custom',
          message: `two channel profiles are named ${channel.name}`,
          input: channel.name,
          path: [index, 'name'],
        });
      seen.add(channel.name);
    });
  });

export type ChannelFileConfig = z.infer<typeof channelSchema>;
