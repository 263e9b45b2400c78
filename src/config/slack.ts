import { z } from 'zod';

/**
 * `slack:` in the config file: what Slack's agent container offers (docs/configuration.md, "slack"). Slack
 * shows at most four suggested prompts (assistant.threads.setSuggestedPrompts, the manifest's agent_view).
 */
const suggestedPrompt = z
  .object({
    /** What the button says. */
    title: z.string().trim().min(1),
    /** What it sends as the person's message. */
    message: z.string().trim().min(1),
  })
  .strict();

export const slackSchema = z
  .object({
    suggestedPrompts: z.array(suggestedPrompt).max(4).default([]),
    /**
     * Message search: `private: false` asks Slack for public channels only (private channels, DMs and group DMs
     * are never searched); either way Butler shows a result only where its readers may see it.
     */
    search: z
      .object({ private: z.boolean().default(true) })
      .strict()
      .default({ private: true }),
  })
  .strict()
  .default({ suggestedPrompts: [], search: { private: true } });
