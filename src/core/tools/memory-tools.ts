import { z } from 'zod';
import type { MemoryOwner, MemoryRepository } from '../store.js';
import { defineTool } from './define-tool.js';
import type { Tool, ToolContext } from './tool.js';

/** remember / recall / forget: durable notes per workspace and person, in Postgres. */

const owner = (context: ToolContext): MemoryOwner => ({
  platform: context.address.platform,
  workspace: context.address.workspace,
  userId: context.requester.id,
});

const recallLimit = 10;

export function createMemoryTools(memories: MemoryRepository): Tool[] {
  const remember = defineTool({
    name: 'remember',
    description:
      'Save a lasting fact or preference about the person you are talking to, for future conversations. Only when they ask you to remember something or clearly state a durable preference.',
    risk: 'low',
    schema: z.object({
      content: z.string().min(1).max(1000).describe('The fact, in one self-contained sentence'),
    }),
    summarize: (input) => `Remember: ${input.content}`,
    execute: async (input, context) => {
      const memory = await memories.add(owner(context), input.content.trim());
      return `Saved memory ${memory.id}.`;
    },
  });

  const recall = defineTool({
    name: 'recall',
    description:
      'Search what you remember about the person you are talking to. An empty query lists recent memories.',
    risk: 'low',
    schema: z.object({ query: z.string().max(200).default('').describe('Words the memory must contain') }),
    summarize: (input) => `Recall memories matching "${input.query}"`,
    execute: async (input, context) => {
      const found = await memories.search(owner(context), input.query, recallLimit);
      if (found.length === 0) return 'No matching memories.';
      await memories.touch(found.map((memory) => memory.id));
      return found.map((memory) => `${memory.id}: ${memory.content}`).join('\n');
    },
  });

  const forget = defineTool({
    name: 'forget',
    description:
      'Delete one memory by its id (from recall or the prompt), when the person asks you to forget it.',
    risk: 'low',
    schema: z.object({ id: z.uuid().describe('The memory id') }),
    summarize: (input) => `Forget memory ${input.id}`,
    execute: async (input, context) =>
      (await memories.remove(owner(context), input.id))
        ? `Forgot memory ${input.id}.`
        : `No memory ${input.id} of yours exists.`,
  });

  return [remember, recall, forget];
}
