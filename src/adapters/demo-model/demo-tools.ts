import { z } from 'zod';
import { defineTool } from '../../core/tools/define-tool.js';
import type { Tool } from '../../core/tools/tool.js';

/**
 * The two tools of demo mode (`BUTLER_MODEL=demo`), which exist only there: a lookup that runs at once (low
 * risk) and a restart that waits for an approver (high risk). Neither touches anything.
 */
export function createDemoTools(): Tool[] {
  const name = z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\w.-]+$/, 'letters, digits, ., _ and - only');
  return [
    defineTool({
      name: 'demo_lookup',
      description: 'Demo only: the made-up status of a service by name. Touches nothing.',
      schema: z.object({ name }).strict(),
      risk: 'low',
      summarize: (input) => `Look up ${input.name} (demo)`,
      execute: async (input) =>
        `${input.name}: healthy, 3 instances, last deploy 2 hours ago (made up by the demo).`,
    }),
    defineTool({
      name: 'demo_restart',
      description:
        'Demo only: pretends to restart a service by name. Touches nothing, but asks for approval first.',
      schema: z.object({ service: name }).strict(),
      risk: 'high',
      summarize: (input) => `Restart ${input.service} (demo: nothing is touched)`,
      execute: async (input) => `${input.service} restarted (demo: nothing was touched).`,
    }),
  ];
}
