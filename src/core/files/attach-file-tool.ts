import { z } from 'zod';
import { defineTool } from '../tools/define-tool.js';
import type { Tool } from '../tools/tool.js';

/** Longest file the model may write with `attach_file`, in characters. */
export const attachFileMaxChars = 200_000;

/** The type a file name says, for the common text formats; else plain text. */
function mimeTypeOf(filename: string): string {
  const extension = filename.toLowerCase().split('.').at(-1) ?? '';
  const types: Record<string, string> = {
    csv: 'text/csv',
    tsv: 'text/tab-separated-values',
    json: 'application/json',
    md: 'text/markdown',
    html: 'text/html',
    xml: 'application/xml',
    yaml: 'application/yaml',
    yml: 'application/yaml',
    svg: 'image/svg+xml',
  };
  return types[extension] ?? 'text/plain';
}

/**
 * `attach_file`: the model writes something better as a file than as a message (a CSV, a long log, a
 * script) and Butler sends it into the conversation. Low risk: it only shows the conversation text the
 * model could have written into its reply.
 */
export function createAttachFileTool(): Tool {
  return defineTool({
    name: 'attach_file',
    description:
      'Send a text file into this conversation: for content better as a file than as a message, such as a CSV, a long log, a config file or a script. Say in your reply what the file holds.',
    risk: 'low',
    schema: z.object({
      filename: z
        .string()
        .min(1)
        .max(120)
        .regex(/^[^/\\\0]+$/, 'a file name, without folders')
        .describe('File name with its extension, e.g. "errors.csv"'),
      content: z.string().min(1).max(attachFileMaxChars).describe('The whole file content'),
      mimeType: z
        .string()
        .regex(/^[\w.+-]+\/[\w.+-]+$/)
        .optional()
        .describe('MIME type; guessed from the extension when absent'),
    }),
    summarize: (input) => `Send the file ${input.filename} (${input.content.length} characters)`,
    execute: async (input) => ({
      text: '',
      files: [
        {
          name: input.filename,
          mimeType: input.mimeType ?? mimeTypeOf(input.filename),
          bytes: new TextEncoder().encode(input.content),
        },
      ],
    }),
  });
}
