import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * An MCP server written with the 1.x SDK, which speaks 2025-11-25 only: its tools ask the person for input
 * mid-call with a server-initiated `elicitation/create` request on the session, sent as part of the call (on
 * its SSE stream over HTTP). `ship` asks where to ship (the same form as the 2026 server's `ship`),
 * `sign_in` asks for a password, `verify` asks the person to open a page (URL mode). Runs over Streamable
 * HTTP in the test process (`mcp-2025-questions-server.ts`) and over stdio (`mcp-2025-questions-stdio.ts`).
 */

/** One `tools/call` the server received, with what the person answered or why asking failed. */
export interface Call2025 {
  tool: string;
  args: Record<string, unknown>;
  answer?: { action: string; content?: Record<string, unknown> };
  error?: string;
}

/** The form `ship` asks for, as the 2026 server's `ship` does. */
const shippingSchema = {
  type: 'object' as const,
  properties: {
    address: { type: 'string' as const, title: 'Address', description: 'Where it goes', minLength: 3 },
    speed: {
      type: 'string' as const,
      title: 'Speed',
      oneOf: [
        { const: 'standard', title: 'Standard' },
        { const: 'express', title: 'Express' },
      ],
      default: 'standard',
    },
    copies: { type: 'integer' as const, title: 'Copies', minimum: 1, maximum: 5, default: 1 },
    gift: { type: 'boolean' as const, title: 'Gift wrap', default: false },
  },
  required: ['address', 'speed'],
};

function text(value: string, isError = false) {
  return { content: [{ type: 'text' as const, text: value }], ...(isError ? { isError: true } : {}) };
}

export function createQuestioning2025Server(record: (call: Call2025) => void): McpServer {
  const server = new McpServer({ name: 'butler-test-2025-questions', version: '1.0.0' });

  /**
   * Asks the person (as part of the call `requestId`), records the answer, and says what came of it. `waitMs`: how
   * long the server waits for the answer (the SDK's default is a minute), then gives up (and says so).
   */
  async function ask(
    tool: string,
    args: Record<string, unknown>,
    requestId: string | number,
    params: Parameters<typeof server.server.elicitInput>[0],
    say: (answer: ElicitResult) => string,
    waitMs?: number,
  ) {
    let answer: ElicitResult;
    try {
      const options = { relatedRequestId: requestId, ...(waitMs ? { timeout: waitMs } : {}) };
      answer = await server.server.elicitInput(params, options);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      record({ tool, args, error: message });
      return text(message, true);
    }
    record({
      tool,
      args,
      answer: { action: answer.action, ...(answer.content ? { content: answer.content } : {}) },
    });
    return text(say(answer));
  }

  server.registerTool(
    'echo',
    {
      description: 'Say the text back',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      record({ tool: 'echo', args });
      return text(`echo: ${args.text}`);
    },
  );
  server.registerTool(
    'ship',
    {
      description: 'Ship an item; asks the person where to',
      inputSchema: { item: z.string(), waitMs: z.number().optional() },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args, extra) => {
      const { item, waitMs } = args;
      return ask(
        'ship',
        args,
        extra.requestId,
        { message: `Where should the ${item} go?`, requestedSchema: shippingSchema },
        ({ action, content = {} }) => {
          if (action === 'decline') return `The person declined to say where the ${item} goes.`;
          if (action === 'cancel') return `The person cancelled shipping the ${item}.`;
          const gift = content.gift === true ? ', gift wrapped' : '';
          return `Shipping the ${item} to ${content.address} (${content.speed}, ${content.copies ?? 1} copies${gift}).`;
        },
        waitMs,
      );
    },
  );
  server.registerTool(
    'sign_in',
    {
      description: 'Signs in; asks for a password',
      inputSchema: { user: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) =>
      ask(
        'sign_in',
        args,
        extra.requestId,
        {
          message: `The password for ${args.user}, please`,
          requestedSchema: {
            type: 'object',
            properties: { password: { type: 'string', title: 'Password' } },
            required: ['password'],
          },
        },
        ({ action }) => `Sign-in answered: ${action}`,
      ),
  );
  server.registerTool(
    'verify',
    { description: 'Asks the person to verify on a web page', annotations: { readOnlyHint: true } },
    async (extra) =>
      ask(
        'verify',
        {},
        extra.requestId,
        {
          mode: 'url',
          message: 'Confirm your account',
          url: 'https://auth.example.com/verify?session=abc',
          elicitationId: 'verify-1',
        },
        ({ action }) => `verify: ${action}`,
      ),
  );
  return server;
}
